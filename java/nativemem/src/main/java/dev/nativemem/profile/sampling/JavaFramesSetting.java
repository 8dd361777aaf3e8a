package dev.nativemem.profile.sampling;

import dev.nativemem.base.Setting;
import dev.nativemem.internal.NativeBridge;
import dev.nativemem.internal.NativeLibraryLoader;
import dev.nativemem.internal.SettingsInEffect;
import java.util.Map;
import java.util.Properties;

/**
 * {@code -Dnativemem.profile.javaFrames}: {@code true} turns Java frames on at every start that
 * reads settings (the front door's, the agent's, the profile export's); it never turns them off (a
 * start that records them unasked, the export, leaves them off only for an explicit {@code false}).
 * The library loader applies no setting of its own.
 */
public final class JavaFramesSetting {
  private JavaFramesSetting() {}

  /** Whether {@code settings} ask for Java frames ({@code true}). */
  public static boolean asked(Properties settings) {
    return Boolean.parseBoolean(Setting.PROFILE_JAVA_FRAMES.valueIn(settings).trim());
  }

  /** Whether {@code settings} refuse Java frames: the setting is there and is not {@code true}. */
  public static boolean refused(Properties settings) {
    return settings.getProperty(Setting.PROFILE_JAVA_FRAMES.property()) != null && !asked(settings);
  }

  /** Turns Java frames on if the system properties ask for them; see {@link #applyAtStart}. */
  public static void applyAtStart() {
    applyAtStart(System.getProperties());
  }

  /**
   * Turns Java frames on if {@code settings} ask for them; a failure is told on the log, never
   * thrown.
   */
  public static void applyAtStart(Properties settings) {
    if (!asked(settings)) {
      return;
    }
    try {
      NativeLibraryLoader.load();
      NativeBridge.call("java_frames", Map.of("on", true));
    } catch (RuntimeException | LinkageError e) {
      SettingsInEffect.tell(
          System.Logger.Level.WARNING,
          "nativemem: " + Setting.PROFILE_JAVA_FRAMES + "=true has no effect: " + e.getMessage());
    }
  }
}
