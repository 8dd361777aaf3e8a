package dev.nativemem.handles;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.nativemem.ContractFixtures;
import org.junit.jupiter.api.Test;

/**
 * A report's text carries names a tracked or attached JVM chose (thread names, frames, class
 * names): their control characters are shown, never sent to the terminal.
 */
class HandleReportTextTest {
  /** Clear the screen, set the window title, colour the text, and a C1 CSI (JSON-escaped). */
  private static final String HOSTILE = "\\u001b[2J\\u001b]0;owned\\u0007\\u001b[31m\\u009b1m";

  private static final String SHOWN = "\\x1b[2J\\x1b]0;owned\\x07\\x1b[31m\\u009b1m";

  @Test
  void threadNamesAndFramesAreShownNotObeyed() {
    String json = ContractFixtures.text("handle-report.json");
    String hostile =
        json.replace("\"compaction-1\"", "\"compaction" + HOSTILE + "\"")
            .replace("com.example.Compactor.compact(", "com.example.Compactor" + HOSTILE + "(");
    assertTrue(hostile.contains("compaction" + HOSTILE) && hostile.contains("Compactor" + HOSTILE));
    HandleReport report = HandleReports.fromJson(true, hostile);
    String text = report.toString();
    for (String shown :
        new String[] {
          text, report.sites().get(0).toString(), report.oldestOpen().get(0).toString()
        }) {
      assertEquals(-1, firstControl(shown), shown);
    }
    assertTrue(text.contains("compaction" + SHOWN), text);
    assertTrue(text.contains("com.example.Compactor" + SHOWN + "(Compactor.java:88)"), text);
    assertTrue(text.contains("\n"), "lines are kept");
  }

  /** The index of the first character a terminal would obey (but line feed and tab), or -1. */
  private static int firstControl(String text) {
    for (int i = 0; i < text.length(); i++) {
      char c = text.charAt(i);
      if ((c < 0x20 && c != '\n' && c != '\t') || (c >= 0x7f && c <= 0x9f)) {
        return i;
      }
    }
    return -1;
  }
}
