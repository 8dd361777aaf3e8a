package dev.nativemem.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;

import org.junit.jupiter.api.Test;

class TerminalTextTest {
  @Test
  void controlCharactersButNewlineAndTabAreEscaped() {
    assertEquals(
        "thread '\\u001b]0;pwned\\u0007' \\u009b2J\\u007f\\u000d\n\tok",
        TerminalText.escape("thread '\u001b]0;pwned\u0007' \u009b2J\u007f\r\n\tok"));
    String plain = "RSS 1.0 MiB\n\tü €";
    assertSame(plain, TerminalText.escape(plain));
  }

  @Test
  void jsonStaysJsonWithTheSameMeaning() throws Exception {
    String json = "{\"thread\":\"\u001b]0;x\u0007\"}";
    String escaped = TerminalText.escape(json);
    assertEquals("{\"thread\":\"\\u001b]0;x\\u0007\"}", escaped);
    assertEquals(Json.parseObject(escaped).get("thread"), "\u001b]0;x\u0007");
  }
}
