package dev.nativemem.internal;

/**
 * Text from someone else (an attach target, a dump, a bundle) made safe to print on a terminal:
 * every control character but newline and tab (C0, DEL and C1, which carry the escape sequences
 * that retitle, clear or recolour a terminal) becomes {@code \}{@code uXXXX}. JSON from nativemem's
 * writer has none raw, so escaping it keeps it valid JSON with the same meaning.
 */
public final class TerminalText {
  private TerminalText() {}

  /** {@code text} with its control characters, but {@code \n} and {@code \t}, escaped. */
  public static String escape(String text) {
    int first = 0;
    while (first < text.length() && !escaped(text.charAt(first))) {
      first++;
    }
    if (first == text.length()) {
      return text;
    }
    StringBuilder safe = new StringBuilder(text.length() + 16).append(text, 0, first);
    for (int i = first; i < text.length(); i++) {
      char c = text.charAt(i);
      if (escaped(c)) {
        safe.append(String.format("\\u%04x", (int) c));
      } else {
        safe.append(c);
      }
    }
    return safe.toString();
  }

  private static boolean escaped(char c) {
    return (c < 0x20 && c != '\n' && c != '\t') || (c >= 0x7f && c <= 0x9f);
  }
}
