package dev.nativemem.tests;

import dev.nativemem.NativeMemory;
import dev.nativemem.profile.HeapProfile;
import dev.nativemem.profile.HeapProfiler;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.zip.Deflater;
import java.util.zip.Inflater;

/** Runs in a forked JVM: one profiling scenario per invocation, results as lines on stdout. */
public final class HeapProfilingChild {
  /** Enough zlib state (about 7 KiB per Inflater, 260 KiB per Deflater) to be sampled surely. */
  private static final int STREAMS = 1500;

  private static final List<Object> LIVE = new ArrayList<>();

  public static void main(String[] args) throws Exception {
    HeapProfiler profiler = NativeMemory.profiling();
    switch (args[0]) {
      case "churn":
        profiler.start();
        churn();
        keepInflaters();
        keepDeflaters();
        dump(args[1]);
        break;
      case "stopped":
        profiler.start();
        keepInflaters();
        profiler.stop();
        System.out.println("ACTIVE_AFTER_STOP " + profiler.isActive());
        keepDeflaters();
        dump(args[1]);
        break;
      case "interval":
        System.out.println("INTERVAL " + profiler.resetWithSampleInterval(Long.parseLong(args[1])));
        System.out.println("READ_BACK " + profiler.sampleIntervalBytes());
        profiler.start();
        keepInflaters();
        dump(args[2]);
        break;
      case "thread":
        profiler.start();
        profiler.setThreadActive(false);
        System.out.println("THREAD_ACTIVE " + profiler.isThreadActive());
        keepDeflaters();
        profiler.setThreadActive(true);
        keepInflaters();
        dump(args[1]);
        break;
      case "mallctl":
        for (int i = 1; i < args.length; i++) {
          System.out.println(args[i] + "=" + NativeMemory.mallctl(args[i]));
        }
        System.out.println("cpus=" + Runtime.getRuntime().availableProcessors());
        break;
      case "errors":
        errors(Paths.get(args[1]));
        break;
      case "concurrent":
        concurrent(Paths.get(args[1]));
        break;
      case "stress":
        stress(Integer.parseInt(args[1]), Paths.get(args[2]));
        break;
      default:
        throw new IllegalArgumentException(args[0]);
    }
    System.out.println("DONE " + LIVE.size());
  }

  private static void dump(String path) {
    HeapProfile profile = NativeMemory.dumpProfile(Paths.get(path));
    System.out.println("DUMP " + profile.path());
    System.out.println("SAMPLED " + profile.sampledBytes());
    System.out.println("PROFILE_INTERVAL " + profile.sampleIntervalBytes());
    System.out.println("TIME " + profile.time().toEpochMilli());
  }

  private static void churn() {
    for (int i = 0; i < 20_000; i++) {
      new Inflater().end();
      new Deflater().end();
    }
  }

  private static void keepInflaters() {
    for (int i = 0; i < STREAMS; i++) {
      Inflater inflater = new Inflater();
      inflater.setInput(new byte[] {0x78, (byte) 0x9c});
      LIVE.add(inflater);
    }
  }

  private static void keepDeflaters() {
    for (int i = 0; i < STREAMS / 10; i++) {
      LIVE.add(new Deflater());
    }
  }

  /** Prints {@code ERR <case> <exception class> <message>} for each failure a user can cause. */
  private static void errors(Path dir) {
    attempt("null", () -> NativeMemory.dumpProfile(null));
    attempt("missing-dir", () -> NativeMemory.dumpProfile(dir.resolve("no-such-dir/x.heap")));
    attempt("is-dir", () -> NativeMemory.dumpProfile(dir));
    attempt(
        "exists",
        () -> {
          Files.write(dir.resolve("taken.heap"), new byte[] {1});
          return NativeMemory.dumpProfile(dir.resolve("taken.heap"));
        });
    attempt("not-writable", () -> NativeMemory.dumpProfile(Paths.get("/proc/self/x.heap")));
    attempt("empty", () -> NativeMemory.dumpProfile(Paths.get("")));
    attempt(
        "open-dir",
        () -> {
          Path open = Files.createDirectory(dir.resolve("open"));
          Files.setPosixFilePermissions(
              open, java.nio.file.attribute.PosixFilePermissions.fromString("rwxrwxrwx"));
          return NativeMemory.dumpProfile(open.resolve("x.heap"));
        });
    attempt("interval", () -> NativeMemory.profiling().resetWithSampleInterval(0));
    attempt(
        "start",
        () -> {
          NativeMemory.profiling().start();
          return "started";
        });
    attempt("dump", () -> NativeMemory.dumpProfile(dir.resolve("ok.heap")));
    System.out.println("AVAILABLE " + NativeMemory.profiling().isAvailable());
    System.out.println("PROFILER " + NativeMemory.profiling());
  }

  private interface Attempt {
    Object run() throws Exception;
  }

  private static void attempt(String name, Attempt attempt) {
    try {
      System.out.println("OK " + name + " " + attempt.run());
    } catch (Exception e) {
      System.out.println(
          "ERR " + name + " " + e.getClass().getName() + " " + e.getMessage().replace('\n', ' '));
    }
  }

  /** Eight threads dump at once: four to their own files, four to the same one. */
  private static void concurrent(Path dir) throws Exception {
    NativeMemory.profiling().start();
    keepInflaters();
    ExecutorService pool = Executors.newFixedThreadPool(8);
    List<Future<String>> results = new ArrayList<>();
    for (int i = 0; i < 8; i++) {
      Path target = i < 4 ? dir.resolve("own-" + i + ".heap") : dir.resolve("shared.heap");
      results.add(
          pool.submit(
              () -> {
                try {
                  return "OK " + NativeMemory.dumpProfile(target).path();
                } catch (RuntimeException e) {
                  return "ERR " + e.getClass().getName() + " " + e.getMessage();
                }
              }));
    }
    // Child processes (posix_spawn, the JDK's default) while the dumps run.
    List<Future<Integer>> spawns = new ArrayList<>();
    for (int i = 0; i < 4; i++) {
      spawns.add(pool.submit(() -> new ProcessBuilder("true").start().waitFor()));
    }
    for (Future<String> result : results) {
      System.out.println(result.get(60, TimeUnit.SECONDS));
    }
    for (Future<Integer> spawn : spawns) {
      System.out.println("SPAWNED " + spawn.get(60, TimeUnit.SECONDS));
    }
    pool.shutdown();
  }

  /**
   * Allocation threads, profiling toggled every 100 ms, dumps every 500 ms, child processes and GC,
   * for {@code seconds}.
   */
  private static void stress(int seconds, Path dir) throws Exception {
    HeapProfiler profiler = NativeMemory.profiling();
    AtomicBoolean running = new AtomicBoolean(true);
    AtomicLong allocations = new AtomicLong();
    AtomicLong toggles = new AtomicLong();
    AtomicLong dumps = new AtomicLong();
    AtomicLong spawns = new AtomicLong();
    List<Thread> threads = new ArrayList<>();
    for (int t = 0; t < 4; t++) {
      threads.add(
          new Thread(
              () -> {
                List<Object> window = new ArrayList<>();
                while (running.get()) {
                  Inflater inflater = new Inflater();
                  window.add(inflater);
                  window.add(java.nio.ByteBuffer.allocateDirect(4096));
                  if (window.size() > 200) {
                    for (Object o : window) {
                      if (o instanceof Inflater) {
                        ((Inflater) o).end();
                      }
                    }
                    window.clear();
                  }
                  allocations.incrementAndGet();
                }
              },
              "alloc-" + t));
    }
    threads.add(PeriodicStep.startingAndStopping(running, profiler, toggles, FAILURES));
    threads.add(
        PeriodicStep.every(
            running,
            500,
            FAILURES,
            () -> {
              Path target = dir.resolve("stress-" + dumps.get() + ".heap");
              NativeMemory.dumpProfile(target);
              // Keep the disk use bounded: only the dump just written stays.
              Files.delete(target);
              deleteTree(Paths.get(target + ".symbols"));
              dumps.incrementAndGet();
            }));
    threads.add(
        PeriodicStep.every(
            running,
            50,
            FAILURES,
            () -> {
              Process p = new ProcessBuilder("true").start();
              if (!p.waitFor(10, TimeUnit.SECONDS) || p.exitValue() != 0) {
                throw new IllegalStateException("child process failed");
              }
              spawns.incrementAndGet();
            }));
    threads.add(PeriodicStep.every(running, 1000, FAILURES, System::gc));
    for (Thread t : threads) {
      t.start();
    }
    // At least `seconds`, then on until each activity reached its minimum (a loaded machine is
    // slower), for at most four times as long.
    long start = System.nanoTime();
    Thread.sleep(seconds * 1000L);
    while ((toggles.get() < STRESS_TOGGLES
            || dumps.get() < STRESS_DUMPS
            || spawns.get() < STRESS_SPAWNS
            || allocations.get() < STRESS_ALLOCATIONS)
        && System.nanoTime() - start < TimeUnit.SECONDS.toNanos(4L * seconds)) {
      Thread.sleep(100);
    }
    running.set(false);
    for (Thread t : threads) {
      t.join(30_000);
      if (t.isAlive()) {
        System.out.println("STUCK " + t.getName());
      }
    }
    System.out.println("ALLOCATIONS " + allocations.get());
    System.out.println("TOGGLES " + toggles.get());
    System.out.println("DUMPS " + dumps.get());
    System.out.println("SPAWNS " + spawns.get());
    System.out.println("FAILURES " + FAILURES.get());
  }

  private static final AtomicLong FAILURES = new AtomicLong();

  /** What the stress run does at least, each concurrently with the others. */
  static final long STRESS_TOGGLES = 100;

  static final long STRESS_DUMPS = 20;
  static final long STRESS_SPAWNS = 50;
  static final long STRESS_ALLOCATIONS = 10_000;

  private static void deleteTree(Path dir) throws java.io.IOException {
    try (java.util.stream.Stream<Path> walk = Files.walk(dir)) {
      for (Path p : (Iterable<Path>) walk.sorted(java.util.Comparator.reverseOrder())::iterator) {
        Files.delete(p);
      }
    }
  }
}
