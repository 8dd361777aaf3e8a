package dev.nativemem.watch;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/** Which triggers inside the minimum interval still capture: the incident's escalations. */
class EscalationTest {
  @Test
  void aHigherThresholdEscalatesAtOnce() {
    assertTrue(MemoryWatch.escalates(95.0, 85.0, 0));
    assertTrue(MemoryWatch.escalates(99.0, 98.0, 500));
  }

  /**
   * A TaskManager held at its limit dips a point below 99% (re-arming it) and crosses it again:
   * that crossing, like usage staying above 99%, captures again once the incident's last capture is
   * {@link Triggers#TOP_REFRESH_MS} old, so the newest evidence stays close to the kill.
   */
  @Test
  void theHighestThresholdAgainEscalatesOnceTheLastCaptureIsSecondsOld() {
    assertFalse(MemoryWatch.escalates(99.0, 99.0, Triggers.TOP_REFRESH_MS - 1));
    assertTrue(MemoryWatch.escalates(99.0, 99.0, Triggers.TOP_REFRESH_MS));
    assertTrue(MemoryWatch.escalates(99.0, 99.0, 5_000));
  }

  @Test
  void aLowerThresholdOrAnotherTriggerDoesNot() {
    assertFalse(MemoryWatch.escalates(85.0, 99.0, 30_000));
    assertFalse(MemoryWatch.escalates(null, 99.0, 30_000));
  }
}
