package dev.nativemem.handles.tracking;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/**
 * The rate at which {@code level=sampled} records stacks per kind, on a clock the test moves: a
 * burst of a rare kind is recorded whole, a hot kind is held to the rate.
 */
class KindSamplingTest {
  private final AtomicLong now = new AtomicLong(1_000_000_000_000L);
  private final KindSampling sampling = new KindSampling(now::get);

  private int taken(String kind, int creations, long stepNanos) {
    int taken = 0;
    for (int i = 0; i < creations; i++) {
      taken += sampling.withinRate(kind) ? 1 : 0;
      now.addAndGet(stepNanos);
    }
    return taken;
  }

  /**
   * Flink starts up to five manual compactions together, each creating a ColumnFamilyOptions in the
   * same millisecond, a few times a minute: every one of them has its stack.
   */
  @Test
  void aBurstOfARareKindIsRecordedWhole() {
    for (int round = 0; round < 10; round++) {
      assertEquals(5, taken("ColumnFamilyOptions", 5, 100_000), "round " + round);
      now.addAndGet(10_000_000_000L); // ten seconds until the next round
    }
  }

  @Test
  void aHotKindIsHeldToTheRateAfterItsBurst() {
    // 100,000 a second for ten seconds (the last one at 10 s): the burst, then four a second.
    int taken = taken("Inflater", 1_000_001, 10_000);
    assertEquals(KindSampling.BURST + 10 * KindSampling.PER_SECOND, taken, "in ten seconds");
  }

  @Test
  void kindsHaveTheirOwnBudgets() {
    assertEquals(KindSampling.BURST, taken("Inflater", 1000, 0));
    assertEquals(5, taken("ColumnFamilyOptions", 5, 0));
  }

  @Test
  void anIdleKindEarnsNoMoreThanOneBurst() {
    taken("Statistics", KindSampling.BURST, 0);
    now.addAndGet(3_600_000_000_000L); // an hour idle
    assertEquals(KindSampling.BURST, taken("Statistics", 1000, 0));
  }
}
