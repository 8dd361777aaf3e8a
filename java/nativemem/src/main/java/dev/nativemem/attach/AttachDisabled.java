package dev.nativemem.attach;

/**
 * Whether a JVM was started with {@code -XX:+DisableAttachMechanism}, read from what starts it
 * (HotSpot's order, the last setting winning: {@code JAVA_TOOL_OPTIONS}, {@code JDK_JAVA_OPTIONS},
 * the command line, {@code _JAVA_OPTIONS}), so that {@code attach} says so at once rather than
 * after waiting for a socket that never opens.
 */
final class AttachDisabled {
  private static final String ON = "-XX:+DisableAttachMechanism";
  private static final String OFF = "-XX:-DisableAttachMechanism";

  private AttachDisabled() {}

  /** Where {@code pid}'s start turned attach off ("its command line"), or null if nowhere seen. */
  static String where(int pid) {
    String[] environ = nulSeparated(ProcText.read(pid, "environ")); // another user's: unreadable
    String[] cmdline = nulSeparated(ProcText.read(pid, "cmdline"));
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

  private static String[] nulSeparated(String text) {
    return text.isEmpty() ? new String[0] : text.split("\0");
  }
}
