package dev.nativemem.flink;

import java.lang.reflect.Method;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.apache.flink.metrics.Gauge;
import org.apache.flink.metrics.MetricGroup;

/**
 * nativemem's gauges in Flink's metric system, under a {@code nativemem} group, published once per
 * TaskManager:
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
 * <p>Names: each tag is a key/value group (a label in Flink's Prometheus reporter, whose series
 * name also carries the key), then the gauge, named by the table's series without {@code
 * nativemem_} and without a leading tag key the group already gives: {@code
 * nativemem_process_rss_bytes} is {@code nativemem.process_rss_bytes}, {@code
 * nativemem_allocator_allocated_bytes{allocator}} is {@code
 * nativemem.allocator.<kind>.allocated_bytes}. docs/flink.md has the Prometheus relabelling that
 * gives back the table's names. A figure this process does not have (no container limit, glibc for
 * jemalloc-only figures, no agent for handles) is not published.
 */
public final class NativeMemoryFlinkMetrics {
  /** The group the gauges are registered under. */
  public static final String GROUP = "nativemem";

  private static final System.Logger LOG =
      System.getLogger(NativeMemoryFlinkMetrics.class.getName());
  private static final Object LOCK = new Object();

  /** The group publishing now; guarded by {@link #LOCK}. */
  private static MetricGroup publishing;

  private static boolean warned;

  private NativeMemoryFlinkMetrics() {}

  /**
   * Registers the gauges on {@code group} unless another group of this JVM publishes them already.
   * Never throws for nativemem's sake: without its native library (or on a platform it does not
   * support) it logs one warning and registers nothing, and the job runs on.
   *
   * @return whether this call registered them
   */
  public static boolean register(MetricGroup group) {
    Objects.requireNonNull(group, "pass getRuntimeContext().getMetricGroup()");
    synchronized (LOCK) {
      if (publishing != null && !isClosed(publishing)) {
        return false;
      }
      List<FlinkGauge> gauges;
      try {
        gauges = FlinkGauge.all();
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
      MetricGroup nativemem = group.addGroup(GROUP);
      for (FlinkGauge gauge : gauges) {
        MetricGroup target = nativemem;
        for (Map.Entry<String, String> tag : gauge.tags().entrySet()) {
          target = target.addGroup(tag.getKey(), tag.getValue());
        }
        target.gauge(gauge.name(), (Gauge<Double>) gauge::value);
      }
      publishing = group;
      return true;
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
