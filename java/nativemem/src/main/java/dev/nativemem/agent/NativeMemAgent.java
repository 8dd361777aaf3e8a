package dev.nativemem.agent;

import java.io.File;
import java.lang.instrument.Instrumentation;
import java.util.jar.JarFile;

/**
 * Entry point of {@code -javaagent:nativemem.jar[=options]} and of late attach.
 *
 * <p>The jar goes onto the bootstrap class path first, so that {@code java.util.zip.Inflater}
 * (loaded by the bootstrap loader) can call the hooks, and every class loader, Flink's per-job ones
 * included, sees one copy of nativemem. Nothing else of nativemem is touched before that.
 */
public final class NativeMemAgent {
  private static final String RUNTIME = "dev.nativemem.agent.AgentRuntime";

  private NativeMemAgent() {}

  public static void premain(String args, Instrumentation instrumentation) {
    start(args, instrumentation, false);
  }

  public static void agentmain(String args, Instrumentation instrumentation) {
    start(args, instrumentation, true);
  }

  private static void start(String args, Instrumentation instrumentation, boolean lateAttach) {
    try {
      if (!onBootClassPath()) {
        File jar =
            new File(
                NativeMemAgent.class.getProtectionDomain().getCodeSource().getLocation().toURI());
        instrumentation.appendToBootstrapClassLoaderSearch(new JarFile(jar));
      }
      Class.forName(RUNTIME, true, null)
          .getMethod("start", String.class, Instrumentation.class, boolean.class)
          .invoke(null, args, instrumentation, lateAttach);
    } catch (Throwable e) {
      System.err.println(
          "nativemem agent: cannot start (" + e + "); the application runs without it");
    }
  }

  private static boolean onBootClassPath() {
    try {
      Class.forName(RUNTIME, false, null);
      return true;
    } catch (ClassNotFoundException e) {
      return false;
    }
  }
}
