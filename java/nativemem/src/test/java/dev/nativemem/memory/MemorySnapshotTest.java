package dev.nativemem.memory;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.nativemem.NativeMemory;
import dev.nativemem.handles.NativeHandles;
import java.time.Duration;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

class MemorySnapshotTest {

  @Test
  void readersWithinMaxAgeShareOneReadingAndLaterOnesGetAFreshOne() throws Exception {
    long start = System.nanoTime();
    MemorySnapshot first = NativeMemory.snapshot();
    MemorySnapshot second = NativeMemory.snapshot();
    long elapsed = System.nanoTime() - start;
    Assumptions.assumeTrue(
        elapsed < MemorySnapshot.MAX_AGE.toNanos() / 2,
        "two calls took "
            + Duration.ofNanos(elapsed)
            + " on a busy machine: sharing not observable");
    assertSame(first, second, "a second reader within MAX_AGE reads the same snapshot");

    Thread.sleep(MemorySnapshot.MAX_AGE.toMillis() + 50);
    MemorySnapshot later = NativeMemory.snapshot();
    assertNotSame(first, later, "older than MAX_AGE: a fresh reading");
    assertTrue(
        later.takenAt().isAfter(first.takenAt()), later.takenAt() + " vs " + first.takenAt());
  }

  @Test
  void snapshotHoldsTheResidentBreakdownAndStatsOfThisProcess() {
    MemorySnapshot snapshot = NativeMemory.snapshot();
    assertEquals(MemoryBreakdown.View.RESIDENT, snapshot.breakdown().view());
    assertEquals(
        snapshot.breakdown().allocatorKind(),
        snapshot.stats().kind().name().toLowerCase(java.util.Locale.ROOT));
    assertTrue(snapshot.breakdown().rssBytes() > 16L << 20, snapshot.toString());
    assertTrue(snapshot.toJson().contains("\"breakdown\":{"), snapshot.toJson());
  }

  /** Files keep these two; a reader of another version tells what it reads by {@code schema}. */
  @Test
  void persistedJsonNamesItsSchemaFirst() {
    java.util.Map<String, Object> snapshot =
        dev.nativemem.internal.Json.parseObject(NativeMemory.snapshot().toJson());
    assertEquals("nativemem-snapshot/1", snapshot.get("schema"));
    assertEquals("schema", snapshot.keySet().iterator().next());
    java.util.Map<String, Object> report =
        dev.nativemem.internal.Json.parseObject(NativeHandles.report().toJson());
    assertEquals("nativemem-handle-report/1", report.get("schema"));
    assertEquals("schema", report.keySet().iterator().next());
  }
}
