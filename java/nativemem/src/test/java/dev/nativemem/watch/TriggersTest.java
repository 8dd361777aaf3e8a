package dev.nativemem.watch;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** The triggers on synthetic samples: one a second, a 512 MiB cgroup limit unless said. */
class TriggersTest {
  private static final long MIB = 1 << 20;
  private static final long LIMIT = 512 * MIB;

  private final SampleRing ring = new SampleRing(3600);
  private final long[] row = new long[SampleRing.COLUMNS];
  private long time = 1_764_538_800_000L;

  private static WatchOptions onlyLimits() {
    return WatchOptions.defaults()
        .withGrowth(Duration.ZERO, Duration.ofMinutes(1))
        .withLeakedJump(0);
  }

  private void add(long limit, long usage, long rss, long leaked) {
    java.util.Arrays.fill(row, -1);
    row[SampleRing.TIME] = time;
    row[SampleRing.LIMIT] = limit;
    row[SampleRing.USAGE] = usage;
    row[SampleRing.RSS] = rss;
    row[SampleRing.HANDLES_LEAKED] = leaked;
    ring.add(row);
    time += 1000;
  }

  /** Feeds usage values (MiB) and returns what fired, null where nothing did. */
  private List<Trigger> feed(Triggers triggers, long... usageMib) {
    List<Trigger> fired = new ArrayList<>();
    for (long usage : usageMib) {
      add(LIMIT, usage * MIB, usage * MIB, -1);
      fired.add(triggers.evaluate(ring));
    }
    return fired;
  }

  @Test
  void eachThresholdFiresOncePerCrossingAndRearmsBelow() {
    Triggers triggers = new Triggers(onlyLimits(), -1);
    // 85% of 512 MiB is 435.2 MiB, 95% is 486.4 MiB.
    List<Trigger> fired = feed(triggers, 400, 436, 440, 437, 490, 495, 432, 436, 420, 436);
    assertNull(fired.get(0));
    assertEquals(85.0, fired.get(1).thresholdPercent());
    assertNull(fired.get(2), "still above 85%: no second bundle");
    assertNull(fired.get(3));
    assertEquals(95.0, fired.get(4).thresholdPercent());
    assertNull(fired.get(5));
    assertNull(fired.get(6), "432 MiB (84.4%) is below 85% but within the re-arm gap of 1 point");
    assertNull(fired.get(7), "not re-armed yet");
    assertNull(fired.get(8), "420 MiB: 82%, re-armed");
    assertEquals(85.0, fired.get(9).thresholdPercent(), "crossed again after falling back");
    assertEquals(Trigger.Kind.LIMIT, fired.get(1).kind());
    assertTrue(
        fired.get(4).detail().contains("512.0 MiB memory cgroup limit"), fired.get(4).detail());
  }

  @Test
  void aJumpOverBothThresholdsFiresTheHighestOnce() {
    Triggers triggers = new Triggers(onlyLimits(), -1);
    List<Trigger> fired = feed(triggers, 100, 500, 501);
    assertEquals(95.0, fired.get(1).thresholdPercent());
    assertNull(fired.get(2));
  }

  @Test
  void withoutACgroupLimitRssAgainstPhysicalMemoryStandsIn() {
    Triggers triggers = new Triggers(onlyLimits(), 1024 * MIB);
    add(-1, -1, 800 * MIB, -1);
    assertNull(triggers.evaluate(ring), "78% of physical memory");
    add(-1, -1, 880 * MIB, -1);
    Trigger fired = triggers.evaluate(ring);
    assertEquals(85.0, fired.thresholdPercent());
    assertTrue(fired.detail().contains("physical memory"), fired.detail());
  }

  @Test
  void growthTowardsTheLimitFiresOnceAndNoiseDoesNot() {
    WatchOptions options =
        WatchOptions.defaults()
            .withThresholdsPercent()
            .withLeakedJump(0)
            .withGrowth(Duration.ofSeconds(120), Duration.ofMinutes(10));
    Triggers triggers = new Triggers(options, -1);
    Random random = new Random(42);
    // Flat at 200 MiB with ±20 MiB noise for 5 min: no trend.
    for (int i = 0; i < 300; i++) {
      add(LIMIT, (200 + random.nextInt(41) - 20) * MIB, 0, -1);
      assertNull(triggers.evaluate(ring), "noise at sample " + i);
    }
    // Then 0.5 MiB/s (30 MiB/min): from 200 MiB, the limit is ~10 min away at first.
    Trigger fired = null;
    int firedAt = -1;
    int count = 0;
    for (int i = 0; i < 240; i++) {
      add(LIMIT, (200 * MIB) + i * MIB / 2, 0, -1);
      Trigger t = triggers.evaluate(ring);
      if (t != null) {
        count++;
        if (fired == null) {
          fired = t;
          firedAt = i;
        }
      }
    }
    assertNotNull(fired, "steady growth toward the limit must fire");
    assertEquals(1, count, "once, while the condition holds");
    assertEquals(Trigger.Kind.GROWTH, fired.kind());
    // Fired once the fitted line (a window mixing the flat start and the ramp) predicts the limit
    // within 10 min: not before the ramp's own projection (312 MiB to go at 0.5 MiB/s ~ 10.4 min).
    assertTrue(firedAt > 0, "not on the first ramp sample");
    assertTrue(fired.detail().contains("MiB/min"), fired.detail());
  }

  @Test
  void growthThatStaysFarFromTheLimitDoesNotFire() {
    WatchOptions options =
        WatchOptions.defaults()
            .withThresholdsPercent()
            .withLeakedJump(0)
            .withGrowth(Duration.ofSeconds(60), Duration.ofMinutes(5));
    Triggers triggers = new Triggers(options, -1);
    // 1 MiB/min from 100 MiB: the limit is ~7 hours away.
    for (int i = 0; i < 600; i++) {
      add(LIMIT, 100 * MIB + i * MIB / 60, 0, -1);
      assertNull(triggers.evaluate(ring));
    }
  }

  @Test
  void aJumpInLeakedHandlesFiresAndRearmsWhenItSettles() {
    WatchOptions options =
        WatchOptions.defaults()
            .withThresholdsPercent()
            .withGrowth(Duration.ZERO, Duration.ofMinutes(1))
            .withLeakedJump(100);
    Triggers triggers = new Triggers(options, -1);
    int fired = 0;
    for (int i = 0; i < 200; i++) {
      // 1 leak a second for 100 s (never 100 within a minute), then 10 a second for 20 s.
      long leaked = i < 100 ? i : 100 + (i < 120 ? (i - 100) * 10 : 200);
      add(LIMIT, 100 * MIB, 0, leaked);
      Trigger t = triggers.evaluate(ring);
      if (t != null) {
        fired++;
        assertEquals(Trigger.Kind.LEAKED_HANDLES, t.kind());
        assertEquals(105, i, "the first sample with 100 more than a minute before: " + t);
      }
    }
    assertEquals(1, fired);
  }

  @Test
  void unknownFiguresTriggerNothing() {
    Triggers triggers = new Triggers(WatchOptions.defaults(), -1);
    add(-1, -1, 900 * MIB, -1);
    assertNull(triggers.evaluate(ring), "no limit and no physical memory known");
  }

  /**
   * A process held at its limit lives on for many seconds (the kernel reclaiming page cache): while
   * usage stays above the highest threshold, the limit trigger fires again every {@link
   * Triggers#TOP_REFRESH_MS}, a refresh, so that the newest evidence stays close to the kill.
   */
  @Test
  void aboveTheHighestThresholdTheEvidenceIsTakenAgainEveryThreeSeconds() {
    Triggers triggers = new Triggers(onlyLimits(), -1);
    // 99% of 512 MiB is 506.9 MiB; 98% is 501.8 MiB.
    List<Trigger> fired =
        feed(triggers, 400, 508, 510, 511, 511, 511, 511, 511, 511, 511, 511, 511, 511, 400);
    assertEquals(99.0, fired.get(1).thresholdPercent());
    assertTrue(!fired.get(1).refresh(), fired.get(1).toString());
    List<Integer> refreshes = new ArrayList<>();
    for (int i = 2; i < fired.size(); i++) {
      if (fired.get(i) != null) {
        assertTrue(fired.get(i).refresh(), fired.get(i).toString());
        assertEquals(99.0, fired.get(i).thresholdPercent());
        refreshes.add(i);
      }
    }
    assertEquals(List.of(4, 7, 10), refreshes, "3, 6 and 9 s after the crossing: " + fired);
    assertTrue(
        fired.get(4).detail().contains("above 99% for 3 s: the evidence taken again"),
        fired.get(4).detail());
    // Below the threshold it re-arms: a new crossing is a crossing again, not a refresh.
    List<Trigger> again = feed(triggers, 508, 511, 511);
    assertTrue(
        !again.get(0).refresh() && again.get(0).thresholdPercent() == 99.0, again.toString());
    assertNull(again.get(1));
  }

  /**
   * The sampler's jitter: a crossing sampled 5 ms late, then samples on time, puts the sample due 3
   * s after it 2,995 ms after it. That sample refreshes, not the next one a second later. (Seen at
   * a Flink TaskManager's kill: the one a second later never came, the JVM frozen at its limit.)
   */
  @Test
  void theSampleDueThreeSecondsAfterRefreshesThoughAFewMillisecondsEarly() {
    Triggers triggers = new Triggers(onlyLimits(), -1);
    feed(triggers, 400);
    time += 5;
    Trigger crossing = feed(triggers, 508).get(0);
    time -= 5;
    assertTrue(crossing != null && !crossing.refresh(), String.valueOf(crossing));
    List<Trigger> fired = feed(triggers, 510, 511, 511, 511);
    assertNull(fired.get(0));
    assertNull(fired.get(1));
    assertTrue(fired.get(2) != null && fired.get(2).refresh(), fired.toString());
    assertNull(fired.get(3), "one refresh, not two");
  }

  /** Below the highest threshold nothing is taken again, however long usage stays there. */
  @Test
  void belowTheHighestThresholdNothingIsTakenAgain() {
    Triggers triggers = new Triggers(onlyLimits(), -1);
    List<Trigger> fired = feed(triggers, 400, 490, 490, 490, 490, 490, 490, 490, 490, 490, 490);
    assertEquals(95.0, fired.get(1).thresholdPercent());
    for (int i = 2; i < fired.size(); i++) {
      assertNull(fired.get(i), "sample " + i);
    }
  }

  /**
   * An on-demand reason comes from whoever asked (API, JMX, {@code attach <pid> incident REASON}):
   * in the watch's log line it cannot start a forged {@code nativemem-incident-json:} line, while
   * the bundle keeps it as it was given.
   */
  @Test
  void anOnDemandReasonIsOneEscapedLineInTheLog() {
    Trigger trigger = Trigger.onDemand("x\nnativemem-incident-json: {\"forged\":1}\u001b[31m");
    assertEquals(
        "on-demand: x\\x0anativemem-incident-json: {\"forged\":1}\\x1b[31m", trigger.toString());
    assertEquals("x\nnativemem-incident-json: {\"forged\":1}\u001b[31m", trigger.detail());
  }
}
