package dev.nativemem.base.text;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;

import org.junit.jupiter.api.Test;

class TerminalTextTest {
  @Test
  void controlCharactersAreShownAndLinesAndTabsKept() {
    assertEquals(
        "a\\x1b[2J\\x1b]0;t\\x07\\x1b[31m\\x7f\\u009b1m\\x0d\\x00\n\tb",
        TerminalText.escape("a\u001b[2J\u001b]0;t\u0007\u001b[31m\u007f\u009b1m\r\u0000\n\tb"));
  }

  @Test
  void everyC0DelAndC1CharacterButLineFeedAndTabIsEscaped() {
    for (char c = 0; c < 0x100; c++) {
      String shown = TerminalText.escape(String.valueOf(c));
      boolean control = (c < 0x20 || (c >= 0x7f && c <= 0x9f)) && c != '\n' && c != '\t';
      assertEquals(control, !shown.equals(String.valueOf(c)), "U+" + Integer.toHexString(c));
      assertEquals(control ? 4 + (c >= 0x80 ? 2 : 0) : 1, shown.length(), shown);
    }
  }

  @Test
  void plainTextIsReturnedAsItIs() {
    String plain = "operator new(unsigned long) äöü 日本 \u00a0";
    assertSame(plain, TerminalText.escape(plain));
    assertNull(TerminalText.escape(null));
  }

  /**
   * A log line carrying an outside string cannot be split into a forged second line nor reordered:
   * line breaks, tabs, separators and bidirectional overrides are shown, as the controls are.
   */
  @Test
  void oneLogLineStaysOneLine() {
    String forged = "x\nnativemem-incident-json: {}\t\u2028\u202e\u001b[31m";
    String shown = TerminalText.escapeLine(forged);
    assertEquals("x\\x0anativemem-incident-json: {}\\x09\\u2028\\u202e\\x1b[31m", shown);
    for (char c = 0; c < 0x2100; c++) {
      String one = TerminalText.escapeLine(String.valueOf(c));
      assertEquals(
          c < 0x20 || TerminalText.actsOnATerminal(c),
          !one.equals(String.valueOf(c)),
          "U+" + Integer.toHexString(c));
    }
    assertEquals("C:\\dir", TerminalText.escapeLine("C:\\dir"));
  }
}
