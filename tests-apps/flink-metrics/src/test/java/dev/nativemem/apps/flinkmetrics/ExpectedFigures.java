package dev.nativemem.apps.flinkmetrics;

import dev.nativemem.memory.MemoryBreakdown;
import dev.nativemem.memory.MemorySnapshot;
import java.util.HashMap;
import java.util.Map;

/**
 * The figures a reading's breakdown and allocator statistics give directly, by series key, computed
 * here rather than by the metric table: what the published gauges must equal.
 */
final class ExpectedFigures {
  private ExpectedFigures() {}

  static Map<String, Double> of(MemorySnapshot snapshot) {
    MemoryBreakdown b = snapshot.breakdown();
    Map<String, Double> figures = new HashMap<>();
    figures.put(
        "nativemem_allocator_allocated_bytes;allocator=" + b.allocatorKind(),
        (double) snapshot.stats().allocatedBytes());
    figures.put("nativemem_process_rss_bytes", (double) b.rssBytes());
    figures.put("nativemem_process_rss_anon_bytes", (double) b.rssAnonBytes());
    figures.put("nativemem_process_rss_file_bytes", (double) b.rssFileBytes());
    figures.put("nativemem_jvm_heap_committed_bytes", (double) b.heapCommittedBytes());
    figures.put("nativemem_jvm_direct_buffers_bytes", (double) b.directBufferBytes());
    figures.put("nativemem_unaccounted_bytes", (double) b.unaccountedBytes());
    b.limitBytes().ifPresent(v -> figures.put("nativemem_container_limit_bytes", (double) v));
    b.headroomBytes().ifPresent(v -> figures.put("nativemem_container_headroom_bytes", (double) v));
    return figures;
  }
}
