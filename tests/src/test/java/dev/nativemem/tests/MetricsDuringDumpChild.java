package dev.nativemem.tests;

import dev.nativemem.NativeMemory;
import dev.nativemem.memory.MemorySnapshot;
import dev.nativemem.metrics.NativeMemoryMetric;
import dev.nativemem.metrics.NativeMemoryMetrics;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.zip.Inflater;

/**
 * Runs in a forked JVM under a profiling jemalloc: one thread dumps heap profiles back to back
 * while the main thread takes metric readings. A reading that starts and ends while the same dump
 * runs (the dump counter unchanged, the dumping flag set at both ends) did not wait for it.
 */
public final class MetricsDuringDumpChild {
  private static final long RUN_MILLIS = 5_000;
  private static final long MAX_DUMPS = 200;

  public static void main(String[] args) throws Exception {
    Path dir = Paths.get(args[0]);
    NativeMemory.profiling().start();
    List<Inflater> live = new ArrayList<>();
    for (int i = 0; i < 1500; i++) {
      live.add(new Inflater()); // sampled allocations, so dumps have stacks to write
    }
    AtomicBoolean dumping = new AtomicBoolean();
    AtomicLong dumps = new AtomicLong();
    AtomicBoolean stop = new AtomicBoolean();
    Thread dumper =
        new Thread(
            () -> {
              while (!stop.get() && dumps.get() < MAX_DUMPS) {
                dumping.set(true);
                NativeMemory.dumpProfile(dir.resolve("d-" + dumps.get() + ".heap"));
                dumping.set(false);
                dumps.incrementAndGet();
              }
            });
    dumper.start();
    long readsInsideADump = 0;
    long reads = 0;
    long deadline = System.currentTimeMillis() + RUN_MILLIS;
    while (System.currentTimeMillis() < deadline) {
      Thread.sleep(MemorySnapshot.MAX_AGE.toMillis() + 5); // a fresh snapshot each time
      long dumpBefore = dumps.get();
      boolean inDumpBefore = dumping.get();
      NativeMemoryMetrics m = NativeMemoryMetrics.read();
      boolean inSameDump = inDumpBefore && dumping.get() && dumps.get() == dumpBefore;
      reads++;
      if (inSameDump) {
        readsInsideADump++;
      }
      if (m.value(NativeMemoryMetric.PROFILING_ACTIVE).orElse(-1) != 1.0
          || !m.value(NativeMemoryMetric.PROCESS_RSS).isPresent()) {
        System.out.println("BAD_READING " + m);
      }
    }
    stop.set(true);
    dumper.join();
    // Whether it samples is read on every reading, never held: a stop shows in the next one.
    NativeMemory.profiling().stop();
    System.out.println(
        "ACTIVE_AFTER_STOP "
            + NativeMemoryMetrics.read().value(NativeMemoryMetric.PROFILING_ACTIVE).orElse(-1));
    NativeMemory.profiling().start();
    NativeMemoryMetrics restarted = NativeMemoryMetrics.read();
    System.out.println(
        "ACTIVE_AFTER_START " + restarted.value(NativeMemoryMetric.PROFILING_ACTIVE).orElse(-1));
    System.out.println("READY " + restarted.value(NativeMemoryMetric.PROFILING_READY).orElse(-1));
    System.out.println("READS " + reads);
    System.out.println("READS_INSIDE_A_DUMP " + readsInsideADump);
    System.out.println("DUMPS " + dumps.get());
    System.out.println("LIVE " + live.size());
    System.out.println("DONE ");
  }
}
