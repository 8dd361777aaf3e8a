package dev.nativemem.watch;

import java.io.IOException;
import java.io.Writer;
import java.util.Locale;

/** A bundle's {@code timeline.json}: the watch's samples, oldest first. */
final class BundleTimeline {
  /** The ring's copy, made once: capturing allocates no array that size. */
  private final long[] copy;

  private final long intervalMs;

  BundleTimeline(int ringCapacity, long intervalMs) {
    this.copy = new long[ringCapacity * SampleRing.COLUMNS];
    this.intervalMs = intervalMs;
  }

  /** {@code timeline.json} streamed from a copy of the ring: no object per sample. */
  void write(SampleRing ring, Writer out) throws IOException {
    int count;
    synchronized (copy) {
      count = ring.copyOldestFirst(copy);
      out.write("{\"schema\":\"nativemem-timeline/1\",\"interval_ms\":");
      out.write(Long.toString(intervalMs));
      out.write(",\"samples\":[");
      for (int i = 0; i < count; i++) {
        int row = i * SampleRing.COLUMNS;
        out.write(i == 0 ? "{\"t\":" : ",\n{\"t\":");
        out.write(Long.toString(copy[row + SampleRing.TIME]));
        field(out, "limit", copy[row + SampleRing.LIMIT]);
        field(out, "usage", copy[row + SampleRing.USAGE]);
        field(out, "rss", copy[row + SampleRing.RSS]);
        field(out, "allocator_allocated", copy[row + SampleRing.ALLOCATOR_ALLOCATED]);
        field(out, "allocator_resident", copy[row + SampleRing.ALLOCATOR_RESIDENT]);
        field(out, "heap_used", copy[row + SampleRing.HEAP_USED]);
        field(out, "heap_committed", copy[row + SampleRing.HEAP_COMMITTED]);
        field(out, "handles_open", copy[row + SampleRing.HANDLES_OPEN]);
        field(out, "handles_leaked", copy[row + SampleRing.HANDLES_LEAKED]);
        field(out, "oom", copy[row + SampleRing.OOM]);
        field(out, "oom_kill", copy[row + SampleRing.OOM_KILL]);
        long psi = copy[row + SampleRing.PSI_SOME_AVG10];
        out.write(",\"psi_some_avg10\":");
        out.write(psi < 0 ? "null" : String.format(Locale.ROOT, "%.2f", psi / 100.0));
        out.write('}');
      }
    }
    out.write("]}\n");
  }

  private static void field(Writer out, String key, long value) throws IOException {
    out.write(",\"");
    out.write(key);
    out.write("\":");
    out.write(value < 0 ? "null" : Long.toString(value));
  }
}
