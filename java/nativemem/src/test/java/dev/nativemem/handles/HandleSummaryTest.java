package dev.nativemem.handles;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.nativemem.handles.tracking.HandleTracker;
import java.lang.ref.Reference;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The memory breakdown reads the registry's summary, not the full report: its figures are the
 * report's, for handles whose fate the test knows.
 */
class HandleSummaryTest {
  private static final String KIND = "SummaryTestResource";

  @Test
  void theSummaryCarriesTheReportsCountsPerKindAndCacheCapacities() throws Exception {
    List<TrackedResource<AutoCloseable>> kept = new ArrayList<>();
    for (int i = 0; i < 3; i++) {
      kept.add(NativeHandles.track(() -> {}, KIND));
    }
    kept.get(0).close();
    NativeHandles.track(() -> {}, KIND); // dropped unclosed: leaked once collected
    assertTrue(HandleTracker.get().collectGarbage(10_000), "the collector finished");

    HandleReport summary = NativeHandles.summary();
    HandleReport report = NativeHandles.report();

    HandleReport.KindCount mine = summary.kind(KIND);
    assertEquals(4, mine.created());
    assertEquals(1, mine.closed());
    assertEquals(2, mine.open());
    assertEquals(1, mine.leaked());
    // Only this test's kind: other tests' handles may be collected between the two reads.
    assertEquals(report.kind(KIND).toString(), mine.toString());
    assertEquals(report.openCacheCapacityBytes(), summary.openCacheCapacityBytes());
    assertEquals(report.zombieCacheCapacityBytes(), summary.zombieCacheCapacityBytes());
    assertEquals(report.agentActive(), summary.agentActive());
    assertTrue(summary.sites().isEmpty(), "the summary lists no sites");
    Reference.reachabilityFence(kept);
  }
}
