package dev.nativemem.apps.flinkmetrics;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.nativemem.NativeMemory;
import dev.nativemem.flink.NativeMemoryFlinkMetrics;
import dev.nativemem.metrics.NativeMemoryMetric;
import dev.nativemem.metrics.NativeMemoryMetrics;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.apache.flink.core.execution.JobClient;
import org.junit.jupiter.api.Test;

/**
 * nativemem-flink in a MiniCluster, read back through a metric reporter configured as a user
 * configures one: four subtasks in one TaskManager register, one publishes; the reporter's gauges
 * read what NativeMemory reads in the same JVM; when that subtask's task ends, the next job's first
 * subtask publishes again.
 */
class NativeMemoryFlinkMetricsTest {
  @Test
  void oneSubtaskPerTaskManagerPublishesWhatNativeMemoryReads() throws Exception {
    JobClient job = PublishingMap.start(4, Map.of());
    try {
      assertEquals(4, PublishingMap.CALLS.get());
      assertEquals(1, PublishingMap.REGISTERED.get(), "one of four subtasks publishes");
      List<CapturingReporter.Added> added = nativememGauges();
      Map<String, Long> perSeries =
          added.stream()
              .collect(
                  Collectors.groupingBy(
                      NativeMemoryFlinkMetricsTest::seriesKey, Collectors.counting()));
      perSeries.forEach((series, count) -> assertEquals(1L, count, series + " registered once"));
      assertTrue(perSeries.containsKey("nativemem_process_rss_bytes"), perSeries.toString());
      assertEquals(
          1L,
          perSeries.get("nativemem_handles_open;kind=" + PlantedHandle.KIND),
          "a tagged series: " + perSeries.keySet());
      CapturingReporter.Added allocated = find(added, "allocated_bytes");
      assertEquals(
          NativeMemory.snapshot().breakdown().allocatorKind(),
          allocated.variables().get("<allocator>"),
          "the allocator tag is a Flink variable: " + allocated);
      assertTrue(allocated.identifier().contains(".nativemem.allocator."), allocated.identifier());
      assertGaugesReadNativeMemory(added);
      assertRssMatchesProc(find(added, "process_rss_bytes"));
    } finally {
      PublishingMap.release.countDown();
    }
    job.getJobExecutionResult().get(2, TimeUnit.MINUTES);
    assertTrue(
        nativememGauges().stream()
            .noneMatch(a -> CapturingReporter.LIVE.containsKey(a.identifier())),
        "the gauges leave with their task's group");

    // The group that published is closed: the next subtask to call publishes on its own group.
    CapturingReporter.ADDED.clear();
    JobClient next = PublishingMap.start(2, Map.of());
    try {
      assertEquals(
          1, PublishingMap.REGISTERED.get(), "after a close, one of two subtasks publishes");
      assertFalse(nativememGauges().isEmpty());
    } finally {
      PublishingMap.release.countDown();
    }
    next.getJobExecutionResult().get(2, TimeUnit.MINUTES);
  }

  private static List<CapturingReporter.Added> nativememGauges() {
    return CapturingReporter.ADDED.stream()
        .filter(a -> a.identifier().contains("." + NativeMemoryFlinkMetrics.GROUP + "."))
        .collect(Collectors.toList());
  }

  private static CapturingReporter.Added find(List<CapturingReporter.Added> added, String name) {
    return added.stream()
        .filter(a -> a.name().equals(name))
        .findFirst()
        .orElseThrow(() -> new AssertionError(name + " not published: " + added));
  }

  /**
   * The reporter has one gauge per series of the metric table's reading, named by nativemem-flink's
   * rule, each reading that series; and the figures that come straight from the breakdown equal it.
   * The gauges and this test share one reading when they read within its lifetime, so the check is
   * exact (retried if a reading expired in between).
   */
  private static void assertGaugesReadNativeMemory(List<CapturingReporter.Added> added) {
    for (int attempt = 0; attempt < 20; attempt++) {
      NativeMemoryMetrics reading = NativeMemoryMetrics.current();
      Map<String, Double> gauges = new HashMap<>();
      for (CapturingReporter.Added a : added) {
        gauges.put(seriesKey(a), CapturingReporter.value(a.identifier()));
      }
      if (NativeMemoryMetrics.current() != reading) {
        continue;
      }
      Map<String, Double> table = new HashMap<>();
      reading.measurements().forEach(m -> table.put(m.seriesKey(), m.value()));
      assertEquals(table, gauges, "one gauge per series of the table, with its value");
      ExpectedFigures.of(reading.snapshot())
          .forEach((series, figure) -> assertEquals(figure, gauges.get(series), series));
      return;
    }
    throw new AssertionError("no two reads within one reading's lifetime");
  }

  /**
   * The table's series key of a gauge Flink reported: its name with the tag keys it was stripped of
   * put back, then its key/value groups as tags, in the table's order.
   */
  private static String seriesKey(CapturingReporter.Added gauge) {
    for (NativeMemoryMetric metric : NativeMemoryMetric.values()) {
      String name = metric.prometheusName().substring("nativemem_".length());
      for (String key : metric.tagKeys()) {
        if (name.startsWith(key + "_")) {
          name = name.substring(key.length() + 1);
        }
      }
      boolean tagged =
          metric.tagKeys().stream().allMatch(k -> gauge.variables().containsKey("<" + k + ">"));
      if (name.equals(gauge.name()) && tagged) {
        StringBuilder key = new StringBuilder(metric.prometheusName());
        metric
            .tagKeys()
            .forEach(
                k ->
                    key.append(';')
                        .append(k)
                        .append('=')
                        .append(gauge.variables().get("<" + k + ">")));
        return key.toString();
      }
    }
    throw new AssertionError("no metric of the table is named " + gauge);
  }

  /** Independent of nativemem: the kernel's VmRSS, within what a running MiniCluster moves. */
  private static void assertRssMatchesProc(CapturingReporter.Added rss) throws Exception {
    long proc =
        Files.readAllLines(Paths.get("/proc/self/status")).stream()
                .filter(l -> l.startsWith("VmRSS:"))
                .mapToLong(l -> Long.parseLong(l.replaceAll("[^0-9]", "")))
                .findFirst()
                .orElseThrow()
            * 1024;
    double gauge = CapturingReporter.value(rss.identifier());
    assertTrue(Math.abs(gauge - proc) < 32 << 20, "gauge " + gauge + " vs VmRSS " + proc);
  }
}
