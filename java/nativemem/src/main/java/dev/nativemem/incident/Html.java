package dev.nativemem.incident;

import dev.nativemem.internal.ByteFormat;
import java.util.List;
import java.util.Locale;

/**
 * The page's HTML, written by hand: the core jar carries no template engine (one more shaded
 * dependency for one page), and a page this small reads as well as code. Every string that comes
 * from a bundle goes through {@link #text}; nothing else writes bundle text into the page.
 */
final class Html {
  private final StringBuilder out = new StringBuilder(64 * 1024);

  /** {@code value} escaped for HTML text and quoted attribute values; null reads as empty. */
  static String text(String value) {
    if (value == null) {
      return "";
    }
    StringBuilder escaped = new StringBuilder(value.length() + 16);
    for (int i = 0; i < value.length(); i++) {
      char c = value.charAt(i);
      switch (c) {
        case '&':
          escaped.append("&amp;");
          break;
        case '<':
          escaped.append("&lt;");
          break;
        case '>':
          escaped.append("&gt;");
          break;
        case '"':
          escaped.append("&quot;");
          break;
        case '\'':
          escaped.append("&#39;");
          break;
        default:
          // Control characters other than tab and newline have no place in the page.
          escaped.append(c < 0x20 && c != '\t' && c != '\n' ? '\uFFFD' : c);
      }
    }
    return escaped.toString();
  }

  /** Bytes with a binary unit ("1.5 GiB"), or "unknown". */
  static String bytes(Long bytes) {
    return bytes == null ? "unknown" : ByteFormat.human(bytes);
  }

  /** A count with thousands separators ("2,000"). */
  static String count(long count) {
    return String.format(Locale.ROOT, "%,d", count);
  }

  /** A share of 1 as a percentage ("96%", "0.4%"). */
  static String percent(double share) {
    double p = share * 100;
    return String.format(Locale.ROOT, Math.abs(p) >= 10 || p == 0 ? "%.0f%%" : "%.1f%%", p);
  }

  /** A duration in the unit people use for it ("840 ms", "12 s", "40 min", "3.5 h"). */
  static String duration(long millis) {
    if (millis < 1000) {
      return millis + " ms";
    }
    if (millis < 120_000) {
      return String.format(Locale.ROOT, "%.0f s", millis / 1000.0);
    }
    if (millis < 3 * 3_600_000) {
      return String.format(Locale.ROOT, "%.0f min", millis / 60_000.0);
    }
    return String.format(Locale.ROOT, "%.1f h", millis / 3_600_000.0);
  }

  /** Appends markup we wrote (never bundle text: that goes through {@link #text}). */
  Html raw(String markup) {
    out.append(markup);
    return this;
  }

  /** Appends bundle text, escaped. */
  Html esc(String value) {
    out.append(text(value));
    return this;
  }

  /** A table: the header cells (ours), then rows of cells already escaped or formatted by us. */
  Html table(String id, List<String> header, List<List<String>> rows) {
    out.append("<table id=\"").append(id).append("\"><thead><tr>");
    for (String h : header) {
      out.append("<th>").append(h).append("</th>");
    }
    out.append("</tr></thead><tbody>");
    for (List<String> row : rows) {
      out.append("<tr>");
      for (String cell : row) {
        out.append("<td>").append(cell).append("</td>");
      }
      out.append("</tr>");
    }
    out.append("</tbody></table>\n");
    return this;
  }

  /** A paragraph saying a part of the bundle is absent and why. */
  Html notCaptured(String why) {
    out.append("<p class=\"missing\">not captured: ").append(text(why)).append("</p>\n");
    return this;
  }

  @Override
  public String toString() {
    return out.toString();
  }
}
