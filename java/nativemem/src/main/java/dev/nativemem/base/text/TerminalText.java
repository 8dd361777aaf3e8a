package dev.nativemem.base.text;

/**
 * Text bound for a terminal that carries strings from elsewhere (thread names, stack frames and
 * class names of a tracked or attached JVM, paths and names from dumps, sidecars and bundles), made
 * unable to drive the terminal: every control character but line feed and tab, that is C0, DEL and
 * C1 (U+0080 to U+009F, which terminals also obey), is shown as a visible escape: {@code \x1b} for
 * C0 and DEL, <code>&#92;u009b</code> for C1, as the native library's {@code terminal_text} writes
 * them. JSON outputs need none of this: their writers escape such characters.
 */
public final class TerminalText {
  private static final char[] HEX = "0123456789abcdef".toCharArray();

  private TerminalText() {}

  /** {@code text} with its control characters (but {@code \n} and {@code \t}) shown visibly. */
  public static String escape(CharSequence text) {
    if (text == null) {
      return null;
    }
    int first = 0;
    while (first < text.length() && !isEscaped(text.charAt(first))) {
      first++;
    }
    if (first == text.length()) {
      return text.toString();
    }
    StringBuilder out = new StringBuilder(text.length() + 16).append(text, 0, first);
    for (int i = first; i < text.length(); i++) {
      char c = text.charAt(i);
      if (!isEscaped(c)) {
        out.append(c);
      } else if (c < 0x80) {
        out.append("\\x").append(HEX[c >> 4]).append(HEX[c & 0xf]);
      } else {
        out.append("\\u00").append(HEX[c >> 4]).append(HEX[c & 0xf]);
      }
    }
    return out.toString();
  }

  /**
   * {@code text} for one line of a log, where it cannot end the line early, start a forged one or
   * reorder it: {@link #escape}, and line feed and tab as {@code \x0a} and {@code \x09}, the
   * Unicode line and paragraph separators and bidirectional overrides as <code>&#92;u2028</code>.
   * Backslashes are kept: a writer whose lines are read back exactly escapes them first.
   */
  public static String escapeLine(CharSequence text) {
    if (text == null) {
      return null;
    }
    StringBuilder out = new StringBuilder(text.length() + 8);
    for (int i = 0; i < text.length(); i++) {
      char c = text.charAt(i);
      if (c == '\n' || c == '\t') {
        out.append(c == '\n' ? "\\x0a" : "\\x09");
      } else if (c >= 0x2000 && actsOnATerminal(c)) {
        out.append("\\u").append(HEX[c >> 12]).append(HEX[(c >> 8) & 0xf]);
        out.append(HEX[(c >> 4) & 0xf]).append(HEX[c & 0xf]);
      } else {
        out.append(c);
      }
    }
    return escape(out);
  }

  /** DEL, C1 controls, line and paragraph separators, bidirectional embeddings and isolates. */
  public static boolean actsOnATerminal(char c) {
    return (c >= 0x7f && c < 0xa0)
        || c == '\u2028'
        || c == '\u2029'
        || (c >= '\u202a' && c <= '\u202e')
        || (c >= '\u2066' && c <= '\u2069');
  }

  private static boolean isEscaped(char c) {
    return (c < 0x20 && c != '\n' && c != '\t') || (c >= 0x7f && c <= 0x9f);
  }
}
