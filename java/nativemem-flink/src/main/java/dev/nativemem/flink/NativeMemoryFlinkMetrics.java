package dev.nativemem.flink;

import dev.nativemem.metrics.Measurement;
import dev.nativemem.metrics.NativeMemoryMetric;
import dev.nativemem.metrics.NativeMemoryMetrics;
import java.lang.reflect.Method;
import java.util.HashSet;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import org.apache.flink.metrics.Counter;
import org.apache.flink.metrics.Gauge;
import org.apache.flink.metrics.MetricGroup;

/**
 * nativemem's metric table ({@link dev.nativemem.metrics.NativeMemoryMetric}) as Flink gauges (and
 * a {@link Counter} for each counter of the table) under a {@code nativemem} group, published once
 * per TaskManager:
 *
 * <pre>{@code
 * public void open(OpenContext context) {
 *   NativeMemoryFlinkMetrics.register(getRuntimeContext().getMetricGroup());
 * }
 * }</pre>
 *
 * <p>Every subtask may call it; the first call in the JVM publishes, later ones return {@code
 * false}. Flink gives user code no TaskManager-scoped group, so the gauges live on that first
 * subtask's operator group (its variables label them) until Flink closes the group (the task
 * finished, failed or was cancelled); the next call after that publishes on its own group.
 * Publishing on every subtask's group instead would give N identical series per TaskManager, which
 * a {@code sum} over the fleet would count N times. "Once per JVM" holds when this class is loaded
 * once: put the jars in Flink's {@code lib/} (docs/flink.md); inside a job jar, each job's class
 * loader publishes once.
 *
 * <p>Series: a figure this process does not have (no container limit, glibc for jemalloc-only
 * figures, handle kinds not seen yet) is not published. A series that appears later (a handle kind
 * first seen, a leak of a new catalogue entry) is added at the next call, that is at the next
 * subtask's {@code open()}: restarts, which are when leaks appear, open every subtask again. A
 * series that goes away reads NaN.
 *
 * <p>Names: each tag is a key/value group (a label in Flink's Prometheus reporter, whose series
 * name also carries the key), then the gauge, named by the table's Prometheus name without {@code
 * nativemem_} and without a leading tag key the group already gives: {@code
 * nativemem_process_rss_bytes} is {@code nativemem.process_rss_bytes}, {@code
 * nativemem_allocator_allocated_bytes{allocator}} is {@code
 * nativemem.allocator.<kind>.allocated_bytes}, {@code nativemem_handles_open{kind}} is {@code
 * nativemem.kind.<kind>.handles_open}. docs/prometheus-flink-relabel.yaml gives back the table's
 * names in Prometheus.
 */
public final class NativeMemoryFlinkMetrics {
  /** The group the gauges are registered under. */
  public static final String GROUP = "nativemem";

  private static final System.Logger LOG =
      System.getLogger(NativeMemoryFlinkMetrics.class.getName());
  private static final Object LOCK = new Object();

  // Guarded by LOCK: the subtask group publishing now, its nativemem group, the series on it.
  private static MetricGroup publishing;
  private static MetricGroup nativemem;
  private static final Set<String> PUBLISHED = new HashSet<>();
  private static boolean warned;

  private NativeMemoryFlinkMetrics() {}

  /**
   * Registers the gauges on {@code group} unless another group of this JVM publishes them already
   * (then adds the series that appeared since to that group). Never throws for nativemem's sake:
   * without its native library (or on a platform it does not support) it logs one warning and
   * registers nothing, and the job runs on.
   *
   * @return whether this call made {@code group} the publishing one
   */
  public static boolean register(MetricGroup group) {
    Objects.requireNonNull(group, "pass getRuntimeContext().getMetricGroup()");
    synchronized (LOCK) {
      boolean live = publishing != null && !isClosed(publishing);
      NativeMemoryMetrics reading;
      try {
        reading = NativeMemoryMetrics.current();
      } catch (RuntimeException | LinkageError e) {
        if (!warned) {
          warned = true;
          LOG.log(
              System.Logger.Level.WARNING,
              "nativemem gauges not registered (the job is unaffected): " + e.getMessage(),
              e);
        }
        return false;
      }
      if (!live) {
        publishing = group;
        nativemem = group.addGroup(GROUP);
        PUBLISHED.clear();
      }
      for (Measurement m : reading.measurements()) {
        if (PUBLISHED.add(m.seriesKey())) {
          publish(m);
        }
      }
      return !live;
    }
  }

  private static void publish(Measurement measurement) {
    String name = measurement.metric().prometheusName().substring(GROUP.length() + 1);
    MetricGroup target = nativemem;
    for (Map.Entry<String, String> tag : measurement.tags().entrySet()) {
      target = target.addGroup(tag.getKey(), tag.getValue());
      if (name.startsWith(tag.getKey() + "_")) {
        name = name.substring(tag.getKey().length() + 1);
      }
    }
    String series = measurement.seriesKey();
    if (measurement.metric().type() == NativeMemoryMetric.Type.COUNTER) {
      target.counter(name, new ReadCounter(series));
    } else {
      target.gauge(
          name,
          (Gauge<Double>) () -> NativeMemoryMetrics.current().value(series).orElse(Double.NaN));
    }
  }

  /**
   * A counter of the table ({@code handles_leaked_total}) as a Flink {@link Counter}: reporters
   * that know counters (Datadog, StatsD, InfluxDB) type it as one. Its count is nativemem's, read
   * at each report; nothing in Flink increments it, so {@code inc} and {@code dec} do nothing. A
   * series gone from a reading counts 0. Flink's Prometheus reporter exports every Counter as a
   * Prometheus gauge, under the table's name with {@code _total}: {@code increase()} works on it
   * all the same.
   */
  static final class ReadCounter implements Counter {
    private final String series;

    ReadCounter(String series) {
      this.series = series;
    }

    @Override
    public void inc() {}

    @Override
    public void inc(long n) {}

    @Override
    public void dec() {}

    @Override
    public void dec(long n) {}

    @Override
    public long getCount() {
      return (long) NativeMemoryMetrics.current().value(series).orElse(0);
    }
  }

  /**
   * Whether Flink closed the group (its task ended): {@code isClosed()} of Flink's runtime groups
   * (1.20 and 2.x). A group without it (a test's or a proxy) counts as open.
   */
  static boolean isClosed(MetricGroup group) {
    try {
      Method isClosed = group.getClass().getMethod("isClosed");
      return Boolean.TRUE.equals(isClosed.invoke(group));
    } catch (ReflectiveOperationException | RuntimeException e) {
      return false;
    }
  }
}
