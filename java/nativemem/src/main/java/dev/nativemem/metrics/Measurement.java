package dev.nativemem.metrics;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/** One value of one metric, with its tags: a series at the moment of a reading. Immutable. */
public final class Measurement {
  private final NativeMemoryMetric metric;
  private final Map<String, String> tags;
  private final double value;

  Measurement(NativeMemoryMetric metric, List<String> tagValues, double value) {
    List<String> keys = metric.tagKeys();
    if (keys.size() != tagValues.size()) {
      throw new IllegalArgumentException(metric + " takes tags " + keys + ", got " + tagValues);
    }
    Map<String, String> tags = new LinkedHashMap<>();
    for (int i = 0; i < keys.size(); i++) {
      tags.put(keys.get(i), Objects.requireNonNull(tagValues.get(i), keys.get(i)));
    }
    this.metric = metric;
    this.tags = Collections.unmodifiableMap(tags);
    this.value = value;
  }

  public NativeMemoryMetric metric() {
    return metric;
  }

  /** Tag key to value, in the order of {@link NativeMemoryMetric#tagKeys()}. */
  public Map<String, String> tags() {
    return tags;
  }

  /** In the metric's base unit. */
  public double value() {
    return value;
  }

  /**
   * The series' identity: the Prometheus name, then {@code ;key=value} per tag in table order, such
   * as {@code nativemem_handles_leaked_total;kind=Inflater;known=none}. The keys of {@link
   * dev.nativemem.NativeMemoryMXBean#getSeries()}.
   */
  public String seriesKey() {
    StringBuilder key = new StringBuilder(metric.prometheusName());
    tags.forEach((k, v) -> key.append(';').append(k).append('=').append(v));
    return key.toString();
  }

  @Override
  public String toString() {
    return seriesKey() + " " + value;
  }
}
