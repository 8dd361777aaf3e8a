package dev.nativemem.internal;

import dev.nativemem.NativeMemoryException;
import java.lang.management.ManagementFactory;
import javax.management.JMException;
import javax.management.MBeanServer;
import javax.management.ObjectName;

/**
 * HotSpot's diagnostic commands ({@code jcmd}'s), run in-process through the DiagnosticCommand
 * MBean without spawning {@code jcmd}.
 */
public final class DiagnosticCommands {
  private static final ObjectName NAME = objectName("com.sun.management:type=DiagnosticCommand");

  private DiagnosticCommands() {}

  /** Whether this JVM has them (HotSpot does). */
  public static boolean available() {
    return ManagementFactory.getPlatformMBeanServer().isRegistered(NAME);
  }

  /**
   * The text of one command: {@code operation} is the MBean's name for it ({@code gcHeapInfo} for
   * {@code GC.heap_info}); {@code args} null for a command that takes none.
   */
  public static String run(String operation, String[] args) {
    MBeanServer server = ManagementFactory.getPlatformMBeanServer();
    try {
      Object text =
          args == null
              ? server.invoke(NAME, operation, null, null)
              : server.invoke(
                  NAME, operation, new Object[] {args}, new String[] {String[].class.getName()});
      return String.valueOf(text);
    } catch (JMException e) {
      throw new NativeMemoryException(
          "cannot run the " + operation + " diagnostic command in this JVM: " + e.getMessage(), e);
    }
  }

  private static ObjectName objectName(String name) {
    try {
      return new ObjectName(name);
    } catch (JMException e) {
      throw new IllegalStateException(e);
    }
  }
}
