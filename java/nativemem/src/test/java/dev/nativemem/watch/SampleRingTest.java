package dev.nativemem.watch;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.time.Duration;
import org.junit.jupiter.api.Test;

class SampleRingTest {
  private static long[] row(long t) {
    long[] row = new long[SampleRing.COLUMNS];
    for (int c = 0; c < row.length; c++) {
      row[c] = t * 100 + c;
    }
    return row;
  }

  @Test
  void keepsTheNewestCapacitySamplesOldestFirst() {
    SampleRing ring = new SampleRing(5);
    for (long t = 1; t <= 12; t++) {
      ring.add(row(t));
      assertEquals(Math.min(t, 5), ring.size());
    }
    long[] copy = new long[5 * SampleRing.COLUMNS];
    assertEquals(5, ring.copyOldestFirst(copy));
    for (int i = 0; i < 5; i++) {
      long t = 8 + i;
      for (int c = 0; c < SampleRing.COLUMNS; c++) {
        assertEquals(t * 100 + c, copy[i * SampleRing.COLUMNS + c]);
      }
    }
    assertEquals(1200 + SampleRing.RSS, ring.back(0, SampleRing.RSS));
    assertEquals(800, ring.back(4, SampleRing.TIME));
    assertThrows(IndexOutOfBoundsException.class, () -> ring.back(5, SampleRing.TIME));
  }

  @Test
  void aSampleIsCopiedNotKept() {
    SampleRing ring = new SampleRing(2);
    long[] row = row(1);
    ring.add(row);
    row[SampleRing.RSS] = -5;
    assertEquals(100 + SampleRing.RSS, ring.back(0, SampleRing.RSS));
  }

  @Test
  void defaultHistoryIsAnHourOfSecondSamples() {
    assertEquals(3600, WatchOptions.defaults().capacity());
    assertEquals(
        120,
        WatchOptions.defaults()
            .withInterval(Duration.ofMillis(500))
            .withHistory(Duration.ofMinutes(1))
            .capacity());
  }
}
