package dev.nativemem.apps.flinkmetrics;

import dev.nativemem.MemoryBreakdown;
import dev.nativemem.MemorySnapshot;
import java.util.HashMap;
import java.util.Map;

/** What each gauge should read, computed here from a NativeMemory reading by name. */
final class ExpectedFigures {
  private ExpectedFigures() {}

  static Map<String, Double> of(MemorySnapshot snapshot) {
    MemoryBreakdown b = snapshot.breakdown();
    Map<String, Double> figures = new HashMap<>();
    figures.put("allocated_bytes", (double) b.allocatorAllocatedBytes());
    figures.put("process_rss_bytes", (double) b.rssBytes());
    figures.put("unaccounted_bytes", (double) b.unaccountedBytes());
    b.limitBytes().ifPresent(v -> figures.put("container_limit_bytes", (double) v));
    b.headroomBytes().ifPresent(v -> figures.put("container_headroom_bytes", (double) v));
    return figures;
  }
}
