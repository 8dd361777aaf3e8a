package dev.nativemem.attach;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.time.Instant;
import org.junit.jupiter.api.Test;

/** The headline of {@code attach <pid> handles}: since when it counts, without contradiction. */
class TrackedSinceTest {
  @Test
  void fromTheJvmsStartNothingIsSaidToBeLeftOut() {
    assertEquals(
        "Handles tracked since JVM start (the agent was given at start):",
        AttachedCommand.trackedSince(null));
  }

  @Test
  void afterAnAttachTheHandlesMadeBeforeItAreNotCounted() {
    Instant at = Instant.parse("2026-01-02T03:04:05Z");
    assertEquals(
        "Handles tracked since attach at 2026-01-02T03:04:05Z (handles created before the attach"
            + " are not counted):",
        AttachedCommand.trackedSince(at));
  }
}
