package dev.nativemem.tests;

import dev.nativemem.watch.MemoryWatch;
import dev.nativemem.watch.WatchOptions;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.zip.Inflater;

/**
 * For {@link WatchProfileTest}: under a profiling jemalloc, a bundle, 4,000 Inflaters held, a
 * second bundle; prints both bundles' paths.
 */
public final class WatchProfileChild {
  private WatchProfileChild() {}

  public static void main(String[] args) {
    MemoryWatch watch =
        MemoryWatch.start(WatchOptions.defaults().withDirectory(Paths.get(args[0])));
    System.out.println("BUNDLE " + watch.capture("before"));
    List<Inflater> held = new ArrayList<>();
    for (int i = 0; i < 4000; i++) {
      held.add(new Inflater());
    }
    System.out.println("BUNDLE " + watch.capture("after " + held.size() + " Inflaters"));
    watch.close();
  }
}
