package dev.nativemem.internal;

import dev.nativemem.base.Setting;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.TreeSet;

/**
 * The settings in effect, told once per class loader when the native library loads: one INFO line
 * naming the properties set, and a WARNING for a property in a setting's namespace that is no
 * setting ({@code nativemem.handles.levle}). Nothing at the defaults, so an application that sets
 * nothing never has its logging initialised by nativemem; under the agent the lines go to standard
 * error, as the agent's own do (a logging framework is not yet configured in {@code premain}).
 */
public final class SettingsInEffect {
  private static volatile boolean toStandardError;

  private SettingsInEffect() {}

  /** From now on, tell the settings on standard error (the agent, before the application). */
  public static void useStandardError() {
    toStandardError = true;
  }

  /** Tells the lines for this JVM's system properties, if any. */
  static void log() {
    Properties properties = System.getProperties();
    String set = describe(properties);
    if (set != null) {
      tell(System.Logger.Level.INFO, set);
    }
    List<String> unknown = unknown(properties);
    if (!unknown.isEmpty()) {
      tell(
          System.Logger.Level.WARNING,
          "nativemem: ignoring "
              + String.join(", ", unknown)
              + ", which no setting reads; 'java -jar nativemem.jar settings' lists them");
    }
  }

  public static void tell(System.Logger.Level level, String line) {
    if (toStandardError) {
      System.err.println(line);
    } else {
      AppLog.get("dev.nativemem").log(level, line);
    }
  }

  /** {@code nativemem settings: a=1, b=2 (others default)}, or null when none is set. */
  public static String describe(Properties properties) {
    List<String> set = new ArrayList<>();
    for (Setting setting : Setting.values()) {
      String value = properties.getProperty(setting.property());
      if (value != null) {
        set.add(setting.property() + "=" + value);
      }
    }
    return set.isEmpty()
        ? null
        : "nativemem settings: " + String.join(", ", set) + " (others default)";
  }

  /**
   * Properties under a setting's namespace ({@code nativemem.handles.}, {@code nativemem.profile.}
   * ...) that are no setting: typos, most likely. Top-level {@code nativemem.*} names are left out,
   * as tools and tests use some for their own purposes.
   */
  public static List<String> unknown(Properties properties) {
    List<String> unknown = new ArrayList<>();
    for (String name : new TreeSet<>(properties.stringPropertyNames())) {
      if (Setting.of(name).isEmpty() && inSettingNamespace(name)) {
        unknown.add(name);
      }
    }
    return unknown;
  }

  private static boolean inSettingNamespace(String name) {
    int dot = name.lastIndexOf('.');
    String namespace = dot < 0 ? name : name.substring(0, dot + 1);
    if (namespace.equals("nativemem.")) {
      return false;
    }
    for (Setting setting : Setting.values()) {
      if (setting.property().startsWith(namespace)) {
        return true;
      }
    }
    return false;
  }
}
