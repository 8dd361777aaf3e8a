package dev.nativemem.apps.flinkmetrics;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.nativemem.NativeMemory;
import dev.nativemem.flink.NativeMemoryFlinkMetrics;
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
      Map<String, Long> perName =
          added.stream()
              .collect(Collectors.groupingBy(CapturingReporter.Added::name, Collectors.counting()));
      perName.forEach((name, count) -> assertEquals(1L, count, name + " registered once"));
      assertTrue(perName.containsKey("process_rss_bytes"), perName.toString());
      assertTrue(perName.containsKey("allocated_bytes"), perName.toString());
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
   * Every gauge equals the figure of NativeMemory's reading; the gauges and this test share one
   * reading when they read within its lifetime, so the check is exact (retried if a reading expired
   * in between).
   */
  private static void assertGaugesReadNativeMemory(List<CapturingReporter.Added> added) {
    Map<String, Double> read = new HashMap<>();
    Map<String, Double> expected = null;
    for (int attempt = 0; attempt < 20 && expected == null; attempt++) {
      var before = NativeMemory.snapshot();
      read.clear();
      for (CapturingReporter.Added a : added) {
        read.put(
            a.name(),
            ((Number) CapturingReporter.LIVE.get(a.identifier()).getValue()).doubleValue());
      }
      if (NativeMemory.snapshot() == before) {
        expected = ExpectedFigures.of(before);
      }
    }
    assertTrue(expected != null, "no two reads within one snapshot's lifetime");
    for (Map.Entry<String, Double> gauge : read.entrySet()) {
      assertTrue(expected.containsKey(gauge.getKey()), "unexpected gauge " + gauge.getKey());
      assertEquals(expected.get(gauge.getKey()), gauge.getValue(), gauge.getKey());
    }
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
    double gauge = ((Number) CapturingReporter.LIVE.get(rss.identifier()).getValue()).doubleValue();
    assertTrue(Math.abs(gauge - proc) < 32 << 20, "gauge " + gauge + " vs VmRSS " + proc);
  }
}
