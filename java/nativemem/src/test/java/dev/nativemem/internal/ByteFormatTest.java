package dev.nativemem.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

class ByteFormatTest {
  @Test
  void binaryUnitsWithOneDecimal() {
    assertEquals("0 B", ByteFormat.human(0));
    assertEquals("1023 B", ByteFormat.human(1023));
    assertEquals("1.0 KiB", ByteFormat.human(1024));
    assertEquals("1.5 GiB", ByteFormat.human(1536L * 1024 * 1024));
    assertEquals("-2.0 MiB", ByteFormat.human(-2L << 20));
  }
}
