package dev.nativemem.tests;

import dev.nativemem.internal.Json;
import dev.nativemem.memory.MemorySnapshot;
import dev.nativemem.metrics.NativeMemoryMetric;
import dev.nativemem.metrics.NativeMemoryMetrics;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Run in a forked JVM by {@link ScrapeResidencyTest}: the metrics' reading taken as a scrape takes
 * it ({@link NativeMemoryMetrics#current()} after the shared reading expired), between two reads of
 * {@code /proc/self/smaps}, while the heap is small, after it grew by 256 MiB of touched arrays,
 * and after those were dropped and the collector gave the memory back. One JSON line per phase.
 */
public final class ScrapeResidencyProbe {
  private ScrapeResidencyProbe() {}

  static final int MIB = 1 << 20;

  public static void main(String[] args) throws Exception {
    NativeMemoryMetrics.read(); // loads the library and finds the heap's ranges
    List<Map<String, Object>> phases = new ArrayList<>();
    phases.add(phase("small"));
    List<byte[]> held = new ArrayList<>();
    for (int i = 0; i < 256; i++) {
      byte[] chunk = new byte[MIB];
      for (int at = 0; at < MIB; at += 4096) {
        chunk[at] = 1;
      }
      held.add(chunk);
    }
    System.gc(); // promoted: the heap grew
    phases.add(phase("grown"));
    held.clear();
    System.gc();
    System.gc(); // the collector shrinks the heap and uncommits what it gives back
    phases.add(phase("shrunk"));
    Map<String, Object> out = new LinkedHashMap<>();
    out.put("phases", phases);
    System.out.println(Json.write(out));
  }

  private static Map<String, Object> phase(String name) throws Exception {
    Thread.sleep(MemorySnapshot.MAX_AGE.toMillis() + 50); // the shared reading expires
    List<long[]> before = AllocatorProbe.smaps();
    long statmBefore = statmResidentBytes();
    NativeMemoryMetrics metrics = NativeMemoryMetrics.current();
    long statmAfter = statmResidentBytes();
    List<long[]> after = AllocatorProbe.smaps();
    Map<String, Object> breakdown = Json.parseObject(metrics.snapshot().breakdown().toJson());
    List<long[]> ranges = new ArrayList<>();
    Map<String, Object> jvm = AllocatorProbe.cast(breakdown.get("jvm"));
    for (Object range : (List<?>) jvm.get("heap_ranges")) {
      List<?> pair = (List<?>) range;
      ranges.add(
          new long[] {
            Long.parseUnsignedLong(((String) pair.get(0)).substring(2), 16),
            Long.parseUnsignedLong(((String) pair.get(1)).substring(2), 16)
          });
    }
    Map<String, Object> out = new LinkedHashMap<>();
    out.put("phase", name);
    out.put("breakdown", breakdown);
    out.put("smaps_heap_rss_before", AllocatorProbe.inRanges(before, ranges, AllocatorProbe.RSS));
    out.put("smaps_heap_rss_after", AllocatorProbe.inRanges(after, ranges, AllocatorProbe.RSS));
    out.put("statm_rss_before", statmBefore);
    out.put("statm_rss_after", statmAfter);
    out.put("metric_rss", (long) metrics.value(NativeMemoryMetric.PROCESS_RSS).getAsDouble());
    out.put(
        "metric_unaccounted", (long) metrics.value(NativeMemoryMetric.UNACCOUNTED).getAsDouble());
    return out;
  }

  /** The second field of {@code /proc/self/statm} (resident pages), in bytes. */
  static long statmResidentBytes() throws java.io.IOException {
    String statm =
        new String(java.nio.file.Files.readAllBytes(java.nio.file.Paths.get("/proc/self/statm")));
    return Long.parseLong(statm.trim().split("\\s+")[1]) * 4096;
  }
}
