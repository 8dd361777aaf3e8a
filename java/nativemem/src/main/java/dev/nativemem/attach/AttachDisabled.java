package dev.nativemem.attach;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;

/**
 * Whether a JVM was started with {@code -XX:+DisableAttachMechanism}, read from what starts it
 * (HotSpot's order, the last setting winning: {@code JAVA_TOOL_OPTIONS}, {@code JDK_JAVA_OPTIONS},
 * the command line, {@code _JAVA_OPTIONS}), so that {@code attach} says so at once rather than
 * after waiting for a socket that never opens.
 */
final class AttachDisabled {
  private static final String ON = "-XX:+DisableAttachMechanism";
  private static final String OFF = "-XX:-DisableAttachMechanism";

  /** The most read of {@code /proc/<pid>/cmdline} or {@code environ}. */
  private static final int MAX_BYTES = 1 << 20;

  private AttachDisabled() {}

  /** Where {@code pid}'s start turned attach off ("its command line"), or null if nowhere seen. */
  static String where(int pid) {
    Path proc = Paths.get("/proc", Integer.toString(pid));
    String[] environ = read(proc.resolve("environ")); // unreadable for another user: skipped
    String[] cmdline = read(proc.resolve("cmdline"));
    String where = null;
    where = scan(split(variable(environ, "JAVA_TOOL_OPTIONS")), "JAVA_TOOL_OPTIONS", where);
    where = scan(split(variable(environ, "JDK_JAVA_OPTIONS")), "JDK_JAVA_OPTIONS", where);
    where = scan(cmdline, "its command line", where);
    return scan(split(variable(environ, "_JAVA_OPTIONS")), "_JAVA_OPTIONS", where);
  }

  /** The message for a JVM whose start turned attach off at {@code where}. */
  static String message(int pid, String where) {
    return "process "
        + pid
        + " was started with "
        + ON
        + " ("
        + where
        + "), so it accepts no attach: restart it without that flag, or run nativemem inside it"
        + " (-javaagent:nativemem.jar or the API)";
  }

  private static String scan(String[] args, String source, String where) {
    for (String arg : args) {
      if (arg.equals(ON)) {
        where = source;
      } else if (arg.equals(OFF)) {
        where = null;
      }
    }
    return where;
  }

  private static String variable(String[] environ, String name) {
    for (String entry : environ) {
      if (entry.startsWith(name + "=")) {
        return entry.substring(name.length() + 1);
      }
    }
    return "";
  }

  private static String[] split(String options) {
    String trimmed = options.trim();
    return trimmed.isEmpty() ? new String[0] : trimmed.split("\\s+");
  }

  /** A NUL-separated {@code /proc} file, at most {@link #MAX_BYTES}; none if unreadable. */
  private static String[] read(Path file) {
    try (InputStream in = Files.newInputStream(file)) {
      byte[] bytes = in.readNBytes(MAX_BYTES);
      return bytes.length == 0
          ? new String[0]
          : new String(bytes, StandardCharsets.UTF_8).split("\0");
    } catch (IOException | SecurityException e) {
      return new String[0];
    }
  }
}
