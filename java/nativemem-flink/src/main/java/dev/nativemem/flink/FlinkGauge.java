package dev.nativemem.flink;

import dev.nativemem.MemoryBreakdown;
import dev.nativemem.NativeMemory;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Function;

/** One gauge as Flink sees it: a name within the {@code nativemem} group, tags, a value. */
final class FlinkGauge {
  private final String name;
  private final Map<String, String> tags;
  private final Function<MemoryBreakdown, Optional<Long>> read;

  private FlinkGauge(
      String name, Map<String, String> tags, Function<MemoryBreakdown, Optional<Long>> read) {
    this.name = name;
    this.tags = tags;
    this.read = read;
  }

  /** The gauges this process has figures for (throws when nativemem cannot load). */
  static List<FlinkGauge> all() {
    MemoryBreakdown now = NativeMemory.snapshot().breakdown();
    Map<String, String> allocator = Collections.singletonMap("allocator", now.allocatorKind());
    List<FlinkGauge> candidates = new ArrayList<>();
    candidates.add(
        new FlinkGauge(
            "allocator_allocated_bytes", allocator, b -> Optional.of(b.allocatorAllocatedBytes())));
    candidates.add(new FlinkGauge("process_rss_bytes", Map.of(), b -> Optional.of(b.rssBytes())));
    candidates.add(new FlinkGauge("container_limit_bytes", Map.of(), MemoryBreakdown::limitBytes));
    candidates.add(
        new FlinkGauge("container_headroom_bytes", Map.of(), MemoryBreakdown::headroomBytes));
    candidates.add(
        new FlinkGauge("unaccounted_bytes", Map.of(), b -> Optional.of(b.unaccountedBytes())));
    List<FlinkGauge> present = new ArrayList<>();
    for (FlinkGauge gauge : candidates) {
      if (gauge.read.apply(now).isPresent()) {
        present.add(gauge);
      }
    }
    return present;
  }

  /** The series name without {@code nativemem_} and without the leading tag key, if any. */
  String name() {
    String flink = name;
    for (String key : tags.keySet()) {
      if (flink.startsWith(key + "_")) {
        flink = flink.substring(key.length() + 1);
      }
    }
    return flink;
  }

  Map<String, String> tags() {
    return tags;
  }

  /** The current value; NaN when the figure went away. */
  Double value() {
    return read.apply(NativeMemory.snapshot().breakdown())
        .map(Long::doubleValue)
        .orElse(Double.NaN);
  }
}
