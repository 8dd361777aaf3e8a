package dev.nativemem.agent;

import java.io.IOException;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.security.CodeSource;

/** Whether this JVM's main program is nativemem's own CLI, told before its main runs. */
final class RunningCli {
  static final String MAIN_CLASS = "dev.nativemem.cli.NativeMemoryCli";

  private static final String AGENT_CLASS = "dev.nativemem.agent.NativeMemoryAgent";

  private RunningCli() {}

  /**
   * True when the JVM was started as {@code java -cp ... dev.nativemem.cli.NativeMemoryCli} or as
   * {@code java -jar <the agent's own jar>}: the launcher's {@code sun.java.command} names the main
   * class or the jar first. Two file stats at most; false whenever it cannot tell.
   */
  static boolean isThisJvm() {
    String command = System.getProperty("sun.java.command", "").trim();
    if (command.isEmpty()) {
      return false;
    }
    int space = command.indexOf(' ');
    String first = space < 0 ? command : command.substring(0, space);
    if (first.equals(MAIN_CLASS)) {
      return true;
    }
    if (!first.endsWith(".jar")) {
      return false;
    }
    Path agentJar = agentJar();
    try {
      return agentJar != null && Files.isSameFile(Paths.get(first), agentJar);
    } catch (IOException | InvalidPathException | SecurityException e) {
      return false;
    }
  }

  /** The jar the agent was loaded from: its entry class is the system class loader's. */
  private static Path agentJar() {
    try {
      Class<?> agent = Class.forName(AGENT_CLASS, false, ClassLoader.getSystemClassLoader());
      CodeSource source = agent.getProtectionDomain().getCodeSource();
      return source == null ? null : Paths.get(source.getLocation().toURI());
    } catch (ClassNotFoundException | URISyntaxException | RuntimeException | LinkageError e) {
      return null;
    }
  }
}
