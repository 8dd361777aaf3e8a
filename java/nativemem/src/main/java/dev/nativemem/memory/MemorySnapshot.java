package dev.nativemem.memory;

import dev.nativemem.handles.HandleReport;
import dev.nativemem.internal.Json;
import dev.nativemem.memory.reading.NmtSummary;
import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * One reading of the process's memory: the breakdown (resident view) and the allocator's
 * statistics, taken together. The single source of the MXBean's attributes (and of metrics and
 * watches built on nativemem): readers that come within {@link #MAX_AGE} of each other share one
 * reading, so a JMX scrape of every attribute costs one breakdown, and its figures agree with each
 * other.
 */
public final class MemorySnapshot {
  /** How long a snapshot serves {@link MemoryReader#snapshot()} before a fresh one is taken. */
  public static final Duration MAX_AGE = Duration.ofMillis(200);

  /** The {@code schema} of {@link #toJson()}: its name and version. */
  public static final String SCHEMA = "nativemem-snapshot/1";

  private final Instant takenAt;
  private final long takenNanos;
  private final MemoryBreakdown breakdown;
  private final AllocatorStats stats;

  private MemorySnapshot(MemoryBreakdown breakdown, AllocatorStats stats, long takenNanos) {
    this.takenAt = Instant.now();
    this.takenNanos = takenNanos;
    this.breakdown = breakdown;
    this.stats = stats;
  }

  /** Whether this snapshot is older than {@link #MAX_AGE} at {@code nanos}, a nano time. */
  boolean olderThanMaxAgeAt(long nanos) {
    return nanos - takenNanos > MAX_AGE.toNanos();
  }

  /**
   * The snapshot of {@code json} (the native {@code memory_snapshot} job: {@code native_view},
   * {@code stats}, {@code resident_bytes}), with the heap's and code cache's resident bytes already
   * split from it ({@code [heap, code cache]}) and the JVM's pools read now.
   */
  static MemorySnapshot of(
      Map<String, Object> json,
      NmtSummary nmt,
      HandleReport handles,
      Long[] resident,
      long takenNanos) {
    MemoryBreakdown breakdown =
        MemoryBreakdownReader.readResident(
            Json.object(json, "native_view"), nmt, handles, resident);
    return new MemorySnapshot(breakdown, AllocatorStats.of(Json.object(json, "stats")), takenNanos);
  }

  /** When it was taken. */
  public Instant takenAt() {
    return takenAt;
  }

  /** The breakdown, JVM memory counted by resident pages. */
  public MemoryBreakdown breakdown() {
    return breakdown;
  }

  /** The allocator's statistics at the same moment. */
  public AllocatorStats stats() {
    return stats;
  }

  /**
   * {@code {"schema": "nativemem-snapshot/1", "taken_at": ..., "breakdown": {...}, "stats":
   * {...}}}: the unit kept in files and bundles, read back by other versions; {@code schema}
   * changes when a key is renamed or removed, not when one is added.
   */
  public String toJson() {
    Map<String, Object> json = new LinkedHashMap<>();
    json.put("schema", SCHEMA);
    json.put("taken_at", takenAt.toString());
    json.put("breakdown", Json.parseObject(breakdown.toJson()));
    json.put("stats", Json.parseObject(stats.toJson()));
    return Json.write(json);
  }

  @Override
  public String toString() {
    return "memory at " + takenAt + "\n" + breakdown + "\n" + stats;
  }
}
