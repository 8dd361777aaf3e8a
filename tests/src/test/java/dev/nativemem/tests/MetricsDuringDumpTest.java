package dev.nativemem.tests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/**
 * A metrics scrape during a heap-profile dump reads without waiting for the dump; whether profiling
 * samples is read fresh by every reading.
 */
class MetricsDuringDumpTest {
  @Test
  void readingsCompleteWhileADumpRuns() throws Exception {
    HeapProfilingTest.extractPreloadAllocator();
    ForkedJvm.Result r =
        HeapProfilingTest.jvm(HeapProfilingTest.Allocator.DEBIAN)
            .main(
                MetricsDuringDumpChild.class.getName(),
                HeapProfilingTest.freshDir("metrics-during-dump").toString());
    assertEquals(0, r.exitCode, r.toString());
    assertFalse(r.stdout.contains("BAD_READING"), r.toString());
    long dumps = Long.parseLong(HeapProfilingTest.line(r, "DUMPS"));
    long inside = Long.parseLong(HeapProfilingTest.line(r, "READS_INSIDE_A_DUMP"));
    assertTrue(dumps > 0, r.toString());
    assertTrue(inside > 0, "no reading started and ended inside one dump: " + r);
    assertEquals("1500", HeapProfilingTest.line(r, "LIVE"));
    assertEquals("0.0", HeapProfilingTest.line(r, "ACTIVE_AFTER_STOP"), r.toString());
    assertEquals("1.0", HeapProfilingTest.line(r, "ACTIVE_AFTER_START"), r.toString());
    assertEquals("1.0", HeapProfilingTest.line(r, "READY"), r.toString());
  }
}
