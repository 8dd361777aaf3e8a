package dev.nativemem;

import dev.nativemem.memory.MemoryBreakdown;
import dev.nativemem.memory.MemorySnapshot;

/**
 * nativemem over JMX as {@code dev.nativemem:type=NativeMemory}: what jconsole, the Prometheus JMX
 * exporter or Flink's JMX reporter read. Every attribute comes from one {@link MemorySnapshot}, so
 * the attributes of one scrape agree with each other and cost one reading. Byte attributes are -1
 * where the figure does not exist (no limit, or glibc for jemalloc-only figures). Register with
 * {@link NativeMemory#registerMBean()} or {@code -Dnativemem.jmx=true}.
 */
public interface NativeMemoryMXBean {
  /** The name it is registered under. */
  String OBJECT_NAME = "dev.nativemem:type=NativeMemory";

  /** {@code jemalloc} or {@code glibc}. */
  String getAllocatorKind();

  long getAllocatedBytes();

  /** jemalloc's {@code stats.resident}; -1 on glibc. */
  long getAllocatorResidentBytes();

  /** Unused dirty pages jemalloc holds; -1 on glibc. */
  long getAllocatorDirtyBytes();

  long getRssBytes();

  /**
   * RSS minus everything attributed, in the resident view ({@link MemoryBreakdown.View#RESIDENT}):
   * the heap and code cache counted by their resident pages, so a young JVM's untouched heap does
   * not drive it negative. It stays at or above zero up to what is counted but not yet touched
   * (committed metaspace, large malloc'd blocks: a few MiB); a rising value is native memory no
   * view accounts for.
   */
  long getUnaccountedBytes();

  /** The container's memory limit; -1 when unlimited. */
  long getLimitBytes();

  /** Limit minus cgroup usage; -1 without a limit. */
  long getHeadroomBytes();

  /**
   * Every metric of {@link dev.nativemem.metrics.NativeMemoryMetric} from one reading, keyed by
   * {@link dev.nativemem.metrics.Measurement#seriesKey()}: the Prometheus series name, then {@code
   * ;tag=value} per tag ({@code nativemem_process_rss_bytes}, {@code
   * nativemem_allocator_dirty_bytes;allocator=jemalloc}, {@code
   * nativemem_handles_leaked_total;kind=Inflater;known=none}). Absent figures have no entry. What
   * the Prometheus JMX exporter turns into the same series Micrometer publishes (over JMX a table
   * with columns {@code key} and {@code value}).
   */
  java.util.Map<String, Double> getSeries();

  /** Open native handles per kind, from the same reading as {@link #getSeries()}. */
  java.util.Map<String, Long> getHandlesOpen();

  /** The whole breakdown as JSON. */
  String getBreakdownJson();

  /** Allocator statistics as JSON. */
  String getStatsJson();

  /** Purges jemalloc's unused dirty pages (or runs glibc's malloc_trim); returns what changed. */
  String purge();
}
