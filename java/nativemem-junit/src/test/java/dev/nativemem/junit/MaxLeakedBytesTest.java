package dev.nativemem.junit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.nativemem.base.Setting;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtensionConfigurationException;

/** The limit of leaked native bytes as {@code -Dnativemem.junit.maxLeakedBytes} gives it. */
class MaxLeakedBytesTest {
  @Test
  void bytesOrOff() {
    assertEquals(
        4L << 20, NativeLeakCheck.maxLeakedBytes(Setting.JUNIT_MAX_LEAKED_BYTES.defaultValue()));
    assertEquals(0, NativeLeakCheck.maxLeakedBytes("0"));
    assertEquals(67_108_864, NativeLeakCheck.maxLeakedBytes(" 67_108_864 "));
    assertEquals(NativeLeakSettings.NOT_CHECKED, NativeLeakCheck.maxLeakedBytes("off"));
    assertEquals(NativeLeakSettings.NOT_CHECKED, NativeLeakCheck.maxLeakedBytes("OFF"));
  }

  @Test
  void anythingElseIsRefusedNamingTheProperty() {
    for (String wrong : new String[] {"-1", "4MiB", ""}) {
      ExtensionConfigurationException e =
          assertThrows(
              ExtensionConfigurationException.class, () -> NativeLeakCheck.maxLeakedBytes(wrong));
      assertTrue(
          e.getMessage().contains("-Dnativemem.junit.maxLeakedBytes=" + wrong + " is neither"),
          e.getMessage());
    }
  }
}
