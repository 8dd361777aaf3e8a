package dev.nativemem.watch;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Paths;
import java.util.Arrays;
import org.junit.jupiter.api.Test;

/** The log's note of a started watch: every word of it, in lines a log viewer shows whole. */
class StartMessageTest {
  private static final String PLACEMENT =
      "bundles go in /data/incidents/nativemem-1000 (made by nativemem, mode 0700, used through"
          + " one open descriptor) because /data/incidents is shared (uid 0, mode 1777): another"
          + " user of the volume can at most move or delete nativemem-1000 and the bundles in it,"
          + " never redirect a write or a deletion";

  @Test
  void theStartIsSaidInShortLinesThatKeepEveryWord() {
    WatchOptions options = WatchOptions.defaults().withDirectory(Paths.get("/data/incidents"));
    String message = MemoryWatch.startMessage(options, PLACEMENT);
    String[] lines = message.split("\n");
    assertEquals("nativemem memory watch started", lines[0]);
    assertTrue(lines.length >= 4, message);
    for (String line : lines) {
      assertTrue(line.length() <= MemoryWatch.START_LINE_WIDTH, line.length() + ": " + line);
    }
    String words = String.join(" ", Arrays.stream(lines).map(String::trim).toArray(String[]::new));
    assertEquals(
        "nativemem memory watch started " + PLACEMENT + " settings: " + options, words, message);
  }
}
