package dev.nativemem.handles.tracking;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.nativemem.base.TrackingLevel;
import org.junit.jupiter.api.Test;

/** The site of handles without a creation stack says why, and advises only what would help. */
class UnrecordedSiteTest {
  @Test
  void atLevelFullTheNoteDoesNotAdviseTheLevelInEffect() {
    String note = TrackerSites.unrecordedNote(TrackingLevel.FULL, 0);
    assertFalse(note.contains("use level="), note);
    assertTrue(note.contains("before the agent started"), note);
  }

  @Test
  void belowFullTheNoteNamesTheLevelThatRecordsSites() {
    String counts = TrackerSites.unrecordedNote(TrackingLevel.COUNTS, 0);
    assertTrue(counts.contains("level=counts") && counts.contains("use level=sampled"), counts);
    String sampled = TrackerSites.unrecordedNote(TrackingLevel.SAMPLED, 64);
    assertTrue(sampled.contains("1 in 64") && sampled.contains("use level=full"), sampled);
  }
}
