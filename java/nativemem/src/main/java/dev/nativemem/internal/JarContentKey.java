package dev.nativemem.internal;

import java.util.Enumeration;
import java.util.zip.ZipEntry;
import java.util.zip.ZipFile;

/** The identity of a jar by its content, for the agent's kept classes. */
final class JarContentKey {
  private JarContentKey() {}

  /**
   * A key of the jar's whole content that costs no inflating and no digest set-up: a 128-bit hash
   * (two lanes of MurmurHash3's 64-bit finalizer) over every entry's name, size and the CRC-32 of
   * its bytes, as the central directory (read anyway to open the jar) states them, in its order.
   * Two builds share it only if every changed entry keeps its size and CRC-32 (a chance of 2^-32
   * per entry); size and modification time of the jar, which image builders fix for every file,
   * take no part. Not a defence against a hostile jar: whoever writes the jar runs its code.
   */
  static String of(ZipFile zip) {
    long a = 0x243f6a8885a308d3L;
    long b = 0x13198a2e03707344L;
    for (Enumeration<? extends ZipEntry> entries = zip.entries(); entries.hasMoreElements(); ) {
      ZipEntry entry = entries.nextElement();
      long named = (entry.getCrc() << 32) | (entry.getName().hashCode() & 0xffffffffL);
      a = mix(a ^ named) + entry.getSize();
      b = mix(b + entry.getSize()) ^ named;
    }
    return hex(mix(a)) + hex(mix(b ^ a));
  }

  /** 16 hex digits (no {@code String.format}: its parser would cost a JVM start more than this). */
  private static String hex(long value) {
    String digits = Long.toHexString(value);
    return "0000000000000000".substring(digits.length()) + digits;
  }

  /** MurmurHash3's 64-bit finalizer: every input bit changes about half the output bits. */
  private static long mix(long k) {
    k ^= k >>> 33;
    k *= 0xff51afd7ed558ccdL;
    k ^= k >>> 33;
    k *= 0xc4ceb9fe1a85ec53L;
    return k ^ (k >>> 33);
  }
}
