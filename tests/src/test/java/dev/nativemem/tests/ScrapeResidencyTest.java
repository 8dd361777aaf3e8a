package dev.nativemem.tests;

import static dev.nativemem.tests.AllocatorTruthTest.cast;
import static dev.nativemem.tests.AllocatorTruthTest.number;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.jr.ob.JSON;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The figures a metrics scrape publishes follow the kernel as the heap grows and shrinks: each
 * scrape's reading (taken after the last one expired) counts the Java heap's resident pages as
 * {@code /proc/self/smaps} lists them, read just before and after it, and its RSS as {@code
 * /proc/self/statm} does. A reading that kept an older pass (a stale cache) fails the grown or the
 * shrunk phase by hundreds of MiB.
 */
class ScrapeResidencyTest {
  private static final long SLACK = 2L << 20;

  @Test
  void eachScrapeCountsTheHeapAsSmapsDoesAsItGrowsAndShrinks() throws Exception {
    ForkedJvm jvm =
        new ForkedJvm()
            .withTestClasses()
            .jvmArg(
                "-XX:+UseSerialGC",
                "-Xms32m",
                "-Xmx1g",
                "-XX:MinHeapFreeRatio=5",
                "-XX:MaxHeapFreeRatio=10",
                "-XX:-ShrinkHeapInSteps");
    ForkedJvm.Result result = jvm.main("dev.nativemem.tests.ScrapeResidencyProbe");
    assertEquals(0, result.exitCode, result.toString());
    String[] lines = result.stdout.strip().split("\n");
    List<?> phases = (List<?>) JSON.std.mapFrom(lines[lines.length - 1]).get("phases");
    long[] heap = new long[3];
    for (int i = 0; i < 3; i++) {
      Map<String, Object> phase = cast(phases.get(i));
      String what = phase.get("phase") + ": " + phase;
      Map<String, Object> breakdown = cast(phase.get("breakdown"));
      Map<String, Object> heapPart = cast(((List<?>) breakdown.get("attributed")).get(0));
      assertEquals("java_heap_resident", heapPart.get("name"), what);
      heap[i] = number(heapPart, "bytes");
      assertBetween(heap[i], phase, "smaps_heap_rss_before", "smaps_heap_rss_after", what);
      assertBetween(
          number(phase, "metric_rss"), phase, "statm_rss_before", "statm_rss_after", what);
      long parts = 0;
      for (Object part : (List<?>) breakdown.get("attributed")) {
        parts += number(cast(part), "bytes");
      }
      assertEquals(number(phase, "metric_rss") - parts, number(phase, "metric_unaccounted"), what);
    }
    assertTrue(heap[1] - heap[0] >= 200L << 20, "the heap grew by 256 MiB: " + phases);
    assertTrue(heap[1] - heap[2] >= 128L << 20, "the heap gave back most of it: " + phases);
  }

  private static void assertBetween(
      long value, Map<String, Object> phase, String before, String after, String what) {
    long low = Math.min(number(phase, before), number(phase, after));
    long high = Math.max(number(phase, before), number(phase, after));
    assertTrue(
        value >= low - SLACK && value <= high + SLACK,
        value + " outside [" + before + ", " + after + "] ± 2 MiB: " + what);
  }
}
