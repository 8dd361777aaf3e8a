package dev.nativemem.memory;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.nativemem.NativeMemory;
import java.nio.file.Files;
import java.nio.file.Paths;
import org.junit.jupiter.api.Test;

class ProcessMemoryTest {

  @Test
  void rssAgreesWithStatm() throws Exception {
    ProcessMemory m = NativeMemory.processMemory();
    // statm's second field is resident pages: an independent reading of the same number.
    String[] statm =
        new String(Files.readAllBytes(Paths.get("/proc/self/statm"))).trim().split(" ");
    long statmRss = Long.parseLong(statm[1]) * 4096;
    assertTrue(Math.abs(m.rssBytes() - statmRss) < (16L << 20), m + " vs statm " + statmRss);
    assertEquals(m.rssBytes(), m.rssAnonBytes() + m.rssFileBytes() + m.rssShmemBytes());
    assertTrue(m.peakRssBytes() >= m.rssBytes());
    assertTrue(m.threads() >= Thread.activeCount(), m.toString());
  }

  @Test
  void jsonUsesSnakeCaseBytes() {
    String json = NativeMemory.processMemory().toJson();
    assertTrue(json.startsWith("{\"rss_bytes\":"), json);
    assertTrue(json.contains("\"threads\":"), json);
  }
}
