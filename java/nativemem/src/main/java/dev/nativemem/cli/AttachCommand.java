package dev.nativemem.cli;

import dev.nativemem.attach.AttachClient;
import dev.nativemem.attach.AttachProtocol;
import dev.nativemem.internal.FileOwnership;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.List;
import org.apache.commons.cli.CommandLine;
import org.apache.commons.cli.Options;

/**
 * {@code nativemem attach <pid> <command>}: loads this jar's agent into a running JVM through the
 * JDK's attach mechanism, runs the command there and prints what it printed. The JVM accepts an
 * attach only from its own user; the result comes back through the attach socket ({@link
 * AttachProtocol}), never through a file.
 */
final class AttachCommand extends CliCommand {
  static final List<String> COMMANDS =
      List.of(
          "stats",
          "breakdown",
          "advice",
          "handles",
          "profile",
          "dump",
          "report",
          "watch",
          "incident");

  AttachCommand() {
    super(
        "attach",
        "Run a command inside a running JVM, which need not have nativemem: stats, breakdown,"
            + " advice, handles (tracked from the first call on), profile start [--interval"
            + " BYTES] | stop, dump [--out PATH], report [report options] (dump and analyse),"
            + " watch [status | start [--dir DIR] | stop] (the memory watch), incident [REASON]"
            + " (an incident bundle now); add --json where the command takes it.",
        "<pid> <command> [command options]");
  }

  @Override
  boolean passesThrough() {
    return true;
  }

  @Override
  Options options() {
    return new Options();
  }

  @Override
  int run(CommandLine line) throws Exception {
    List<String> args = line.getArgList();
    if (args.size() < 2) {
      throw new UsageException("say which JVM and what to run, e.g. 'attach 4242 stats'");
    }
    String pid = args.get(0);
    if (!pid.matches("[1-9][0-9]{0,9}")) {
      throw new UsageException("<pid> must be a process id, got '" + pid + "'");
    }
    if (Long.parseLong(pid) == ProcessHandle.current().pid()) {
      throw new UsageException("<pid> is this process; name the JVM to look into");
    }
    List<String> command = args.subList(1, args.size());
    if (!COMMANDS.contains(command.get(0))) {
      throw new UsageException(
          "unknown command '" + command.get(0) + "'; one of " + String.join(", ", COMMANDS));
    }
    requireAttachableJvm(pid);
    AttachProtocol.Result result = AttachClient.run(pid, ownJar(), command);
    if (result == null) {
      throw new IllegalStateException(
          "process "
              + pid
              + " gave no result: it runs another nativemem agent that predates"
              + " attach; restart it, or attach with that version's jar");
    }
    out.print(result.out);
    System.err.print(result.err);
    return result.exitCode;
  }

  /**
   * Fails fast, with what to do, where the JDK would wait 10 s and then say little: a pid that is
   * gone, another user's process, a process that is not a JVM.
   */
  private static void requireAttachableJvm(String pid) throws IOException {
    Path proc = Paths.get("/proc", pid);
    if (!Files.isDirectory(proc)) {
      throw new IllegalStateException("no process " + pid + " (as this container sees pids)");
    }
    int owner = (Integer) Files.getAttribute(proc, "unix:uid");
    if (owner != FileOwnership.processUid()) {
      throw new IllegalStateException(
          "process "
              + pid
              + " runs as uid "
              + owner
              + " and a JVM accepts an attach only from its own user: run this command as that"
              + " user (for example 'sudo -u \"#"
              + owner
              + "\" java -jar nativemem.jar attach "
              + pid
              + " ...')");
    }
    boolean jvm = false;
    try {
      for (String mapped : Files.readAllLines(proc.resolve("maps"), StandardCharsets.ISO_8859_1)) {
        jvm |= mapped.endsWith("/libjvm.so");
      }
    } catch (IOException e) {
      return; // the JDK's own attempt says what is wrong
    }
    if (!jvm) {
      throw new IllegalStateException("process " + pid + " is not a Java virtual machine");
    }
    requireSameTmp(pid, proc);
  }

  /**
   * The JDK meets the target at its attach socket in {@code /tmp}; in the same PID namespace it
   * looks in this process's {@code /tmp}. A target in another mount namespace with its own {@code
   * /tmp} (a container sharing the host's PIDs, a service with a private {@code /tmp}) would leave
   * the JDK waiting 10 s for nothing: said at once, with what to do.
   */
  private static void requireSameTmp(String pid, Path proc) {
    try {
      Object mine = Files.getAttribute(Paths.get("/tmp"), "unix:ino");
      Object theirs = Files.getAttribute(proc.resolve("root/tmp"), "unix:ino");
      Object myDevice = Files.getAttribute(Paths.get("/tmp"), "unix:dev");
      Object theirDevice = Files.getAttribute(proc.resolve("root/tmp"), "unix:dev");
      if (mine.equals(theirs) && myDevice.equals(theirDevice)) {
        return;
      }
    } catch (IOException | RuntimeException e) {
      return; // cannot tell: the JDK's own attempt says what is wrong
    }
    throw new IllegalStateException(
        "process "
            + pid
            + " sees another /tmp than this command (another mount namespace: a container, or a"
            + " service with a private /tmp), and the JDK's attach meets it in its /tmp: run this"
            + " command in its namespace, e.g. 'nsenter -t "
            + pid
            + " -m -- java -jar nativemem.jar attach "
            + pid
            + " ...', or inside its container (kubectl exec / docker exec)");
  }

  /** This jar, whose manifest names the agent the target loads. */
  private static String ownJar() {
    try {
      java.security.CodeSource source = AttachCommand.class.getProtectionDomain().getCodeSource();
      // No code source: this class came from the boot class path, where this jar's own agent put
      // it (a JAVA_TOOL_OPTIONS inherited from a container, as 'kubectl exec' passes it), and
      // 'java -jar' named the jar as the class path.
      Path jar =
          source != null
              ? Paths.get(source.getLocation().toURI())
              : Paths.get(System.getProperty("java.class.path", ""));
      if (!Files.isRegularFile(jar)) {
        throw new IllegalStateException("attach runs from the nativemem jar, not from " + jar);
      }
      return jar.toString();
    } catch (java.net.URISyntaxException e) {
      throw new IllegalStateException("cannot name the nativemem jar: " + e.getMessage(), e);
    }
  }
}
