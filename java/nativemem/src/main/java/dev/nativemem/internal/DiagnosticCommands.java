package dev.nativemem.internal;

import dev.nativemem.base.NativeMemoryException;
import java.util.Map;

/**
 * HotSpot's diagnostic commands ({@code jcmd}'s), run in-process through the JVM's management
 * interface (the native library calls it as {@code libmanagement} does), without spawning {@code
 * jcmd}, without the {@code java.management} module, the DiagnosticCommand MBean (whose list of
 * operations is empty in a runtime without {@code jdk.jfr}) or the attach listener.
 */
public final class DiagnosticCommands {
  private static volatile String absence;
  private static volatile boolean checked;

  private DiagnosticCommands() {}

  /** Whether this JVM runs them (HotSpot does). */
  public static boolean available() {
    return absence() == null;
  }

  /** Why this JVM cannot run them (not HotSpot, no management interface), or null when it can. */
  public static String absence() {
    if (!checked) {
      absence = (String) Json.parse(NativeBridge.call("diagnostic_commands_absence"));
      checked = true;
    }
    return absence;
  }

  /**
   * The text of one command line, as {@code jcmd <pid>} would print it: {@code command} is its name
   * ({@code GC.heap_info}), {@code args} its arguments, none when null.
   */
  public static String run(String command, String... args) {
    String line =
        args == null || args.length == 0 ? command : command + " " + String.join(" ", args);
    String why = absence();
    if (why != null) {
      throw new NativeMemoryException(
          "cannot run the " + command + " diagnostic command in this JVM: " + why);
    }
    try {
      return (String) Json.parse(NativeBridge.call("diagnostic_command", Map.of("command", line)));
    } catch (RuntimeException e) {
      throw new NativeMemoryException(
          "the JVM refused the diagnostic command '" + line + "': " + reason(e), e);
    }
  }

  /** An exception's message, or its class when it has none: never the word null. */
  private static String reason(Throwable e) {
    String message = e.getMessage();
    return message == null || message.isEmpty() ? e.getClass().getName() : message;
  }
}
