package dev.nativemem.tests;

import dev.nativemem.watch.MemoryWatch;
import dev.nativemem.watch.WatchOptions;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;

/**
 * Runs as a non-root uid with its watch on a shared volume: captures a bundle, prints {@code DIR}
 * and {@code BUNDLE} lines, waits for the file {@code <signal>} (another uid plants meanwhile),
 * then captures two more (retention keeps 1) and prints their paths.
 */
public final class SharedVolumeChild {
  public static void main(String[] args) throws Exception {
    Path volume = Paths.get(args[0]);
    Path signal = Paths.get(args[1]);
    MemoryWatch watch =
        MemoryWatch.start(
            WatchOptions.defaults()
                .withDirectory(volume)
                .withProfile(false)
                .withRetention(1, Long.MAX_VALUE));
    System.out.println("DIR " + watch.directory());
    System.out.println("BUNDLE " + watch.capture("before"));
    System.out.flush();
    for (int i = 0; i < 600 && !Files.exists(signal); i++) {
      Thread.sleep(100);
    }
    System.out.println("BUNDLE " + watch.capture("after one"));
    System.out.println("BUNDLE " + watch.capture("after two"));
    watch.close();
  }
}
