package dev.nativemem.internal;

import java.util.Locale;

/** Byte counts for people: KiB, MiB or GiB with one decimal. */
public final class ByteFormat {
  private ByteFormat() {}

  /**
   * Formats a byte count with a binary unit.
   *
   * <pre>{@code
   * ByteFormat.human(1536L * 1024 * 1024); // "1.5 GiB"
   * }</pre>
   */
  public static String human(long bytes) {
    double abs = Math.abs((double) bytes);
    if (abs >= 1L << 30) {
      return String.format(Locale.ROOT, "%.1f GiB", bytes / (double) (1L << 30));
    }
    if (abs >= 1L << 20) {
      return String.format(Locale.ROOT, "%.1f MiB", bytes / (double) (1L << 20));
    }
    if (abs >= 1L << 10) {
      return String.format(Locale.ROOT, "%.1f KiB", bytes / (double) (1L << 10));
    }
    return bytes + " B";
  }
}
