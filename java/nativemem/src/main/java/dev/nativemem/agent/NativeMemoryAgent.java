package dev.nativemem.agent;

import java.io.File;
import java.lang.instrument.Instrumentation;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.charset.StandardCharsets;
import java.util.Base64;

/**
 * Entry point of {@code -javaagent:nativemem.jar[=options]}, of late attach, and of {@code
 * nativemem attach} commands.
 *
 * <p>Tracking runs in the system class loader, where the JVM puts an agent's jar: the RocksDB
 * classes (Flink loads them parent-first, Spring Boot's loader delegates to it) resolve {@code
 * HandleHooks} there, and the JDK's zip classes reach it through the one class nativemem defines in
 * the bootstrap loader ({@link BootHooks}); nothing is appended to the bootstrap class path, so a
 * CDS archive keeps sharing every loader's classes. In a running JVM whose application already
 * loaded nativemem itself, tracking would split nativemem between two copies, so it is refused
 * there; attach commands that do not track run in a class loader of their own instead.
 */
public final class NativeMemoryAgent {
  private static final String RUNTIME = "dev.nativemem.agent.AgentRuntime";
  private static final String FACADE = "dev.nativemem.NativeMemory";
  private static final String ATTACHED = "dev.nativemem.cli.AttachedCli";
  private static final String ATTACH = "nativemem-attach";
  private static final String ATTACH_TRACKING = "nativemem-attach-tracking:";

  /** Whether tracking loaded nativemem into the system class loader (once per JVM). */
  private static volatile boolean shared;

  /** The attach commands' own copy of nativemem, made at the first command that needs one. */
  private static ClassLoader isolated;

  /**
   * The jar of the current attach command as the target reads it: a copy made for one command (a
   * JVM in another mount namespace) is removed after it, so a later command names its own.
   */
  private static File commandJar;

  private NativeMemoryAgent() {}

  public static void premain(String args, Instrumentation instrumentation) {
    start(args, instrumentation, false);
  }

  public static void agentmain(String args, Instrumentation instrumentation) {
    start(args, instrumentation, true);
  }

  private static void start(String args, Instrumentation instrumentation, boolean lateAttach) {
    try {
      boolean command = args != null && args.startsWith(ATTACH);
      commandJar = command ? attachJar(args) : null;
      String altered =
          commandJar == null ? null : JarCheck.altered(commandJar, attachJarSha256(args));
      if (altered != null) {
        // Not one class of that jar is loaded: its bytes are not the ones the attach sent.
        System.err.println("nativemem agent: refused an attach command: " + altered);
        return;
      }
      boolean tracking = !command || args.startsWith(ATTACH_TRACKING);
      // Before main nothing of the application is loaded: only a late attach can clash.
      String clash = lateAttach && tracking && !shared ? applicationCopy(instrumentation) : null;
      if (command) {
        Class<?> attached =
            Class.forName(ATTACHED, true, tracking && clash == null ? shared() : own());
        if (clash != null) {
          attached.getMethod("refuse", String.class, String.class).invoke(null, args, clash);
        } else {
          attached
              .getMethod("run", String.class, Instrumentation.class)
              .invoke(null, args, instrumentation);
        }
        return;
      }
      if (clash != null) {
        System.err.println("nativemem agent: " + clash + "; the application runs without it");
        return;
      }
      Class.forName(RUNTIME, true, shared())
          .getMethod("start", String.class, Instrumentation.class, boolean.class)
          .invoke(null, args, instrumentation, lateAttach);
    } catch (Throwable e) {
      System.err.println(
          "nativemem agent: cannot start (" + e + "); the application runs without it");
    }
  }

  /** The system class loader, which holds this jar: the one copy tracking runs in. */
  private static ClassLoader shared() {
    shared = true;
    return NativeMemoryAgent.class.getClassLoader();
  }

  private static synchronized ClassLoader own() throws Exception {
    if (shared) {
      return NativeMemoryAgent.class.getClassLoader(); // one copy for everything already
    }
    if (isolated == null) {
      isolated = new URLClassLoader(new URL[] {jar().toURI().toURL()}, null);
    }
    return isolated;
  }

  /** Why tracking cannot start here: the application loaded nativemem itself; null if not. */
  private static synchronized String applicationCopy(Instrumentation instrumentation) {
    for (Class<?> loaded : instrumentation.getAllLoadedClasses()) {
      ClassLoader loader = loaded.getClassLoader();
      if (loaded.getName().equals(FACADE) && loader != null && loader != isolated) {
        java.security.CodeSource source = loaded.getProtectionDomain().getCodeSource();
        return "this JVM's application loads nativemem itself (from "
            + (source == null ? loader : source.getLocation())
            + "), so handles cannot be tracked after its start: start it with"
            + " -javaagent:nativemem.jar instead";
      }
    }
    return null;
  }

  private static File jar() throws Exception {
    if (commandJar != null && commandJar.isFile()) {
      return commandJar;
    }
    return new File(
        NativeMemoryAgent.class.getProtectionDomain().getCodeSource().getLocation().toURI());
  }

  /**
   * The jar path in an attach command's argument (dev.nativemem.attach.AttachProtocol#command: the
   * third of its NUL-separated words), read here because nothing of nativemem may load before the
   * class loader is chosen; null for a forget or another version's argument.
   */
  private static File attachJar(String args) {
    String[] words = attachWords(args);
    return words == null ? null : new File(words[2]);
  }

  /** The SHA-256 the attaching side computed of the jar it handed over (the fourth word). */
  private static String attachJarSha256(String args) {
    String[] words = attachWords(args);
    return words == null ? "" : words[3];
  }

  /** The first four words of an attach command's argument and the rest; null if it has none. */
  private static String[] attachWords(String args) {
    try {
      String text =
          new String(
              Base64.getUrlDecoder().decode(args.substring(args.indexOf(':') + 1)),
              StandardCharsets.UTF_8);
      String[] words = text.split("\0", 5);
      return words.length == 5 ? words : null;
    } catch (IllegalArgumentException e) {
      return null;
    }
  }
}
