package dev.nativemem.tests;

import dev.nativemem.NativeMemory;
import dev.nativemem.cli.NativeMemoryCli;
import dev.nativemem.handles.NativeHandles;
import dev.nativemem.metrics.NativeMemoryMetrics;
import dev.nativemem.profile.HeapProfiler;
import dev.nativemem.watch.MemoryWatch;
import dev.nativemem.watch.WatchOptions;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.Callable;
import java.util.zip.Inflater;

/**
 * One runtime-matrix cell's JVM: runs every feature in turn (java.base only, nothing else this
 * class needs) and prints one line per feature, {@code feature <name> <exit> <base64 output>}, then
 * {@code ready <pid>}, and waits for its standard input to close, so that the test can attach. With
 * {@code -Dnativemem.cell.dump=<file>} (the bundled allocator preloaded) it also plants live
 * Inflaters from {@link #plant} and dumps the heap profile there, reporting the planted frame; with
 * {@code -Dnativemem.cell.junit=true} (the agent loaded, JUnit on the class path) it runs the JUnit
 * extension on a class that leaks.
 */
public final class RuntimeCellProbe {
  private static final List<Inflater> LIVE = new ArrayList<>();

  private RuntimeCellProbe() {}

  public static void main(String[] args) throws Exception {
    cli("stats", "stats");
    cli("breakdown", "breakdown", "--json");
    cli("breakdown-text", "breakdown");
    cli("advice", "advice");
    api("handles", () -> NativeHandles.report().toString());
    api("metrics", () -> NativeMemoryMetrics.read().toString());
    api("watch", RuntimeCellProbe::watch);
    if (Boolean.getBoolean("nativemem.cell.junit")) {
      api("junit", RuntimeCellProbe::junit);
    }
    String dump = System.getProperty("nativemem.cell.dump");
    if (dump != null) {
      api("dump", () -> dump(Paths.get(dump)));
    }
    System.out.println("ready " + ProcessHandle.current().pid());
    System.out.flush();
    System.in.read();
  }

  /**
   * The JUnit extension on a class that leaks Deflaters ({@link LeakedBytesRunner}, loaded only
   * here): what it printed.
   */
  private static String junit() throws Exception {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    PrintStream was = System.out;
    System.setOut(new PrintStream(out, true, StandardCharsets.UTF_8));
    try {
      Class.forName("dev.nativemem.tests.LeakedBytesRunner")
          .getMethod("main", String[].class)
          .invoke(null, (Object) new String[] {"LeaksDeflaters"});
    } finally {
      System.setOut(was);
    }
    return out.toString(StandardCharsets.UTF_8);
  }

  /** Plants 2000 Inflaters from {@link #plant} with Java frames on; returns the planted frame. */
  private static String dump(Path file) {
    HeapProfiler profiler = NativeMemory.profiling();
    profiler.resetWithSampleInterval(32 * 1024);
    profiler.javaFrames(true);
    profiler.start();
    String frame = "";
    for (int i = 0; i < 2_000; i++) {
      frame = plant();
    }
    NativeMemory.dumpProfile(file);
    return frame;
  }

  /** One live Inflater (zlib's native state); returns this line as the JVM names it. */
  private static String plant() {
    Object[] made = {new Inflater(), new Throwable()};
    LIVE.add((Inflater) made[0]);
    return ((Throwable) made[1]).getStackTrace()[0].toString();
  }

  private static String watch() throws Exception {
    Path dir = Files.createTempDirectory("nativemem-cell-watch");
    Properties properties = new Properties();
    properties.setProperty("nativemem.watch.dir", dir.toString());
    try (MemoryWatch watch = MemoryWatch.start(WatchOptions.from(properties))) {
      long end = System.nanoTime() + 3_000_000_000L;
      while (watch.samples() < 2 && System.nanoTime() < end) {
        Thread.sleep(50);
      }
      return "samples " + watch.samples();
    }
  }

  private static void cli(String feature, String... args) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    int exit;
    try (PrintStream stream = new PrintStream(out, true, StandardCharsets.UTF_8)) {
      try {
        exit = NativeMemoryCli.run(stream, stream, args);
      } catch (Throwable e) {
        e.printStackTrace(stream);
        exit = 99;
      }
    }
    report(feature, exit, out.toString(StandardCharsets.UTF_8));
  }

  private static void api(String feature, Callable<String> call) {
    try {
      report(feature, 0, call.call());
    } catch (Throwable e) {
      ByteArrayOutputStream out = new ByteArrayOutputStream();
      e.printStackTrace(new PrintStream(out, true, StandardCharsets.UTF_8));
      report(feature, 1, out.toString(StandardCharsets.UTF_8));
    }
  }

  private static void report(String feature, int exit, String output) {
    System.out.println(
        "feature "
            + feature
            + " "
            + exit
            + " "
            + Base64.getEncoder().encodeToString(output.getBytes(StandardCharsets.UTF_8)));
  }
}
