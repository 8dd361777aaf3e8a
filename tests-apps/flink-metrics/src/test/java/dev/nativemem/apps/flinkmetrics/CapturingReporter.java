package dev.nativemem.apps.flinkmetrics;

import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import org.apache.flink.metrics.Counter;
import org.apache.flink.metrics.Gauge;
import org.apache.flink.metrics.Metric;
import org.apache.flink.metrics.MetricConfig;
import org.apache.flink.metrics.MetricGroup;
import org.apache.flink.metrics.reporter.MetricReporter;

/**
 * A metric reporter as Flink runs one from {@code metrics.reporter.<name>.factory.class}: it keeps
 * the gauges Flink hands it, with their identifiers and the variables (labels) of their group.
 */
public final class CapturingReporter implements MetricReporter {
  /** One notification of an added gauge. */
  public record Added(String name, String identifier, Map<String, String> variables) {}

  /**
   * Every gauge and counter Flink added, in order, duplicates kept (a second registration shows
   * twice).
   */
  static final List<Added> ADDED = new CopyOnWriteArrayList<>();

  /** The gauges and counters registered now, by identifier. */
  static final Map<String, Metric> LIVE = new ConcurrentHashMap<>();

  /** The value of the gauge or the count of the counter registered as {@code identifier}. */
  static double value(String identifier) {
    Metric metric = LIVE.get(identifier);
    return metric instanceof Counter counter
        ? counter.getCount()
        : ((Number) ((Gauge<?>) metric).getValue()).doubleValue();
  }

  @Override
  public void open(MetricConfig config) {}

  @Override
  public void close() {}

  @Override
  public void notifyOfAddedMetric(Metric metric, String name, MetricGroup group) {
    if (metric instanceof Gauge<?> || metric instanceof Counter) {
      String identifier = group.getMetricIdentifier(name);
      ADDED.add(new Added(name, identifier, Map.copyOf(group.getAllVariables())));
      LIVE.put(identifier, metric);
    }
  }

  @Override
  public void notifyOfRemovedMetric(Metric metric, String name, MetricGroup group) {
    LIVE.remove(group.getMetricIdentifier(name));
  }
}
