package dev.nativemem.junit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.nativemem.handles.KnownLeak;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtensionConfigurationException;

/** {@code @Known}: a catalogue entry by {@code id}, handles by {@code kind}; the reason is kept. */
class KnownTest {
  @NativeLeakSettings(
      known = @NativeLeakSettings.Known(id = "FLINK-39923", reason = "until Flink 2.3"))
  static class ById {}

  @NativeLeakSettings(known = @NativeLeakSettings.Known(kind = "FLINK-39923"))
  static class IdAsKind {}

  @NativeLeakSettings(known = @NativeLeakSettings.Known(kind = "Statistics"))
  static class KindWithoutReason {}

  @NativeLeakSettings(known = @NativeLeakSettings.Known(id = "NO-SUCH-LEAK"))
  static class UnknownId {}

  @NativeLeakSettings(known = @NativeLeakSettings.Known(reason = "neither kind nor id"))
  static class Neither {}

  private static KnownLeak known(Class<?> fixture) {
    NativeLeakSettings settings = fixture.getAnnotation(NativeLeakSettings.class);
    return NativeLeakCheck.known(settings.known()[0], fixture);
  }

  @Test
  void anIdNamesTheCatalogueEntryAndKeepsTheReason() {
    KnownLeak leak = known(ById.class);
    assertEquals("FLINK-39923", leak.id());
    assertEquals("Statistics", leak.kind());
    assertTrue(leak.reason().endsWith("(FLINK-39923): until Flink 2.3"), leak.reason());
  }

  @Test
  void aCatalogueIdGivenAsKindIsRefusedSayingWhatToWrite() {
    ExtensionConfigurationException e =
        assertThrows(ExtensionConfigurationException.class, () -> known(IdAsKind.class));
    assertTrue(e.getMessage().contains("write @Known(id = \"FLINK-39923\")"), e.getMessage());
  }

  @Test
  void aKindNeedsNoReason() {
    KnownLeak leak = known(KindWithoutReason.class);
    assertEquals("Statistics", leak.kind());
    assertEquals(null, leak.id());
    assertTrue(leak.reason().contains(KindWithoutReason.class.getName()), leak.reason());
  }

  @Test
  void anUnknownIdOrNeitherIsRefused() {
    ExtensionConfigurationException unknown =
        assertThrows(ExtensionConfigurationException.class, () -> known(UnknownId.class));
    assertTrue(unknown.getMessage().contains("FLINK-39923"), "lists the ids: " + unknown);
    ExtensionConfigurationException neither =
        assertThrows(ExtensionConfigurationException.class, () -> known(Neither.class));
    assertTrue(neither.getMessage().contains("needs kind = "), neither.getMessage());
  }
}
