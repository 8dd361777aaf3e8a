package dev.nativemem.internal;

import dev.nativemem.Setting;

/** {@code -Dnativemem.profile.javaFrames=true}: Java frames on as soon as the library loads. */
final class JavaFramesSetting {
  private JavaFramesSetting() {}

  static void apply() {
    if (!Boolean.parseBoolean(Setting.PROFILE_JAVA_FRAMES.value())) {
      return;
    }
    try {
      NativeBridge.samplingJavaFramesJson(true);
    } catch (RuntimeException e) {
      SettingsInEffect.tell(
          System.Logger.Level.WARNING,
          "nativemem: " + Setting.PROFILE_JAVA_FRAMES + "=true has no effect: " + e.getMessage());
    }
  }
}
