package dev.nativemem.apps.harness;

import java.util.Set;

/** The Prometheus series of the metric table (issue 16), as Micrometer's registry names them. */
public final class MetricTable {
  private MetricTable() {}

  public static final Set<String> SERIES =
      Set.of(
          "nativemem_allocator_allocated_bytes",
          "nativemem_allocator_active_bytes",
          "nativemem_allocator_resident_bytes",
          "nativemem_allocator_mapped_bytes",
          "nativemem_allocator_retained_bytes",
          "nativemem_allocator_dirty_bytes",
          "nativemem_allocator_arenas",
          "nativemem_process_rss_bytes",
          "nativemem_process_rss_anon_bytes",
          "nativemem_process_rss_file_bytes",
          "nativemem_container_limit_bytes",
          "nativemem_container_usage_bytes",
          "nativemem_container_headroom_bytes",
          "nativemem_jvm_heap_committed_bytes",
          "nativemem_jvm_nonheap_committed_bytes",
          "nativemem_jvm_direct_buffers_bytes",
          "nativemem_unaccounted_bytes",
          "nativemem_handles_open",
          "nativemem_handles_leaked",
          "nativemem_cache_capacity_bytes",
          "nativemem_profiling_ready",
          "nativemem_profiling_active");
}
