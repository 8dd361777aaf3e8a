package dev.nativemem.tests;

import dev.nativemem.NativeMemory;
import dev.nativemem.export.ProfileExporter;
import dev.nativemem.metrics.NativeMemoryMetric;
import dev.nativemem.metrics.NativeMemoryMetrics;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.zip.Inflater;

/**
 * Runs with the agent exporting: plants live Inflaters from one known line, prints that line as the
 * JVM names it, waits while the agent exports, then writes its own dump and prints the export's
 * counters. Arguments: the dump path, seconds to wait, Inflaters to plant.
 */
public final class ProfileExportChild {
  private static final List<Object> LIVE = new ArrayList<>();

  public static void main(String[] args) throws Exception {
    int count = Integer.parseInt(args[2]);
    StackTraceElement frame = null;
    for (int i = 0; i < count; i++) {
      Object[] made = plant();
      LIVE.add(made[0]);
      frame = ((Throwable) made[1]).getStackTrace()[0];
    }
    System.out.println("SITE " + frame);
    long waitUntil = System.nanoTime() + Long.parseLong(args[1]) * 1_000_000_000L;
    long slowest = 0;
    while (System.nanoTime() < waitUntil) {
      // The application's own work goes on: no step waits for the export.
      long start = System.nanoTime();
      new Inflater().end();
      Thread.sleep(10);
      slowest = Math.max(slowest, System.nanoTime() - start);
    }
    System.out.println("SLOWEST_STEP_MS " + slowest / 1_000_000);
    NativeMemory.dumpProfile(Paths.get(args[0]));
    NativeMemoryMetrics metrics = NativeMemoryMetrics.read();
    System.out.println("SENT " + ProfileExporter.sent());
    System.out.println("SENT_BYTES " + ProfileExporter.sentBytes());
    System.out.println(
        "DROPPED_METRIC " + (long) metrics.value(NativeMemoryMetric.EXPORT_DROPPED).orElse(-1));
    System.out.println("DONE " + LIVE.size());
    System.out.println("DONE_AT_MS " + System.currentTimeMillis());
  }

  static Object[] plant() {
    return new Object[] {new Inflater(), new Throwable()};
  }
}
