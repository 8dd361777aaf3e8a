package dev.nativemem.internal;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.attribute.PosixFilePermissions;
import javax.management.JMException;
import javax.management.MBeanServer;
import javax.management.ObjectName;

/**
 * The JVM's perf map ({@code Compiler.perfmap}): address ranges of JIT-compiled methods, so native
 * stacks that enter Java code can be named. JDK 17+; JDK 11 has no such command.
 */
public final class PerfMap {
  private static final String OPERATION = "compilerPerfmap";

  private PerfMap() {}

  /**
   * Writes the perf map to a new private temp file, which the caller deletes.
   *
   * @return the file, or {@code null} when this JVM cannot write one (JDK 11)
   */
  public static Path writeTemp() {
    MBeanServer server = ManagementFactory.getPlatformMBeanServer();
    ObjectName name;
    Path temp;
    try {
      name = new ObjectName("com.sun.management:type=DiagnosticCommand");
      temp =
          Files.createTempFile(
              "nativemem-perf",
              ".map",
              PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
    } catch (JMException | IOException e) {
      return null;
    }
    String[] signature = {String[].class.getName()};
    try {
      // JDK 21+ takes the file name.
      server.invoke(name, OPERATION, new Object[] {new String[] {temp.toString()}}, signature);
      if (Files.size(temp) > 0) {
        return temp;
      }
    } catch (JMException | IOException | RuntimeException e) {
      // JDK 17 takes no argument and always writes /tmp/perf-<pid>.map; JDK 11 has no command.
    }
    try {
      server.invoke(name, OPERATION, new Object[] {new String[0]}, signature);
      Path fixed = Paths.get("/tmp", "perf-" + ProcessHandle.current().pid() + ".map");
      Files.copy(fixed, temp, java.nio.file.StandardCopyOption.REPLACE_EXISTING);
      return temp;
    } catch (JMException | IOException | RuntimeException e) {
      FileTrees.deleteQuietly(temp);
      return null;
    }
  }

  /** Whether this JVM has {@code Compiler.perfmap}. */
  public static boolean isSupported() {
    try {
      ObjectName name = new ObjectName("com.sun.management:type=DiagnosticCommand");
      for (javax.management.MBeanOperationInfo op :
          ManagementFactory.getPlatformMBeanServer().getMBeanInfo(name).getOperations()) {
        if (op.getName().equals(OPERATION)) {
          return true;
        }
      }
    } catch (JMException e) {
      return false;
    }
    return false;
  }
}
