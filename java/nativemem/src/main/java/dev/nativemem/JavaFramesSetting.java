package dev.nativemem;

import dev.nativemem.internal.NativeBridge;
import dev.nativemem.internal.NativeLibraryLoader;
import dev.nativemem.internal.SettingsInEffect;

/**
 * {@code -Dnativemem.profile.javaFrames=true}: Java frames on when the front door starts (the
 * library loader applies no setting of its own).
 */
final class JavaFramesSetting {
  private JavaFramesSetting() {}

  /** Turns Java frames on if the setting says so; a failure is told on the log, never thrown. */
  public static void applyAtStart() {
    if (!Boolean.parseBoolean(Setting.PROFILE_JAVA_FRAMES.value())) {
      return;
    }
    try {
      NativeLibraryLoader.load();
      NativeBridge.samplingJavaFramesJson(true);
    } catch (RuntimeException e) {
      SettingsInEffect.tell(
          System.Logger.Level.WARNING,
          "nativemem: " + Setting.PROFILE_JAVA_FRAMES + "=true has no effect: " + e.getMessage());
    }
  }
}
