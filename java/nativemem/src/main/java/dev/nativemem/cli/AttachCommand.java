package dev.nativemem.cli;

import dev.nativemem.attach.AttachClient;
import dev.nativemem.attach.AttachProtocol;
import dev.nativemem.base.text.TerminalText;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.commons.cli.CommandLine;
import org.apache.commons.cli.Options;

/**
 * {@code java -jar nativemem.jar attach [--timeout SECONDS] <pid> <command>}: loads this jar's
 * agent into a running JVM through HotSpot's attach protocol (spoken by the native library: no
 * {@code jdk.attach} needed), runs the command there and prints what it printed, control characters
 * escaped. The JVM accepts an attach only from its own user or root; the result comes back sealed
 * through the attach socket ({@link AttachProtocol}), never through a file.
 */
final class AttachCommand extends CliCommand {
  /** How long to wait for the target's attach listener and its replies, by default. */
  static final Duration DEFAULT_TIMEOUT = Duration.ofSeconds(10);

  /** How long a command may run in the target (a report symbolizes), unless --timeout says. */
  static final Duration DEFAULT_COMMAND_TIMEOUT = Duration.ofMinutes(10);

  /** The CLI's own commands, which attach runs inside the JVM with the same options. */
  private static final List<String> CLI_COMMANDS =
      List.of("stats", "breakdown", "advice", "analyze");

  /**
   * The commands only attach runs, each with its parameters and what it does: what {@code attach
   * <pid> COMMAND --help} prints, without attaching.
   */
  private static final Map<String, List<String>> ATTACH_ONLY = new LinkedHashMap<>();

  static {
    ATTACH_ONLY.put(
        "handles",
        List.of(
            "[--json]",
            "Turns native-handle tracking on in the JVM (level full: handles opened from"
                + " this call on are tracked) and prints its handle report."));
    ATTACH_ONLY.put(
        "profile",
        List.of(
            "start [--interval BYTES] | stop | status",
            "Starts the JVM's heap profiler (one sample per BYTES allocated on average; a"
                + " new interval discards the samples taken so far), stops it, or says how it"
                + " runs."));
    ATTACH_ONLY.put(
        "dump",
        List.of(
            "[-o FILE]",
            "Writes a heap profile of the JVM to FILE (by default to the JVM's"
                + " -Dnativemem.profile.dir, else its temporary directory) and prints its"
                + " path. A relative FILE is taken from this directory."));
    ATTACH_ONLY.put(
        "watch",
        List.of(
            "[status | start [--dir DIR] | stop]",
            "Says whether a memory watch runs in the JVM, starts one writing its incident"
                + " bundles to DIR, or stops it."));
    ATTACH_ONLY.put(
        "incident",
        List.of(
            "[REASON]",
            "Has the JVM write an incident bundle now (its memory watch's directory, else a"
                + " new watch's default), REASON in its manifest, and prints its path."));
  }

  /** The options whose value is a file or directory: a relative one is taken from here. */
  private static final List<String> PATH_OPTIONS =
      List.of("-o", "--output", "--out", "--dir", "--base");

  static final List<String> COMMANDS = commands();

  private static List<String> commands() {
    List<String> all = new ArrayList<>(CLI_COMMANDS);
    all.addAll(ATTACH_ONLY.keySet());
    return List.copyOf(all);
  }

  AttachCommand() {
    super(
        "attach",
        "Run a command inside a running JVM, which need not have nativemem: stats, breakdown,"
            + " advice, handles (tracked from the first call on), profile start [--interval"
            + " BYTES] | stop, dump [-o FILE], analyze [analyze options] (dump, then analyze),"
            + " watch [status | start [--dir DIR] | stop] (the memory watch), incident [REASON]"
            + " (an incident bundle now); add --json where the command takes it. --timeout"
            + " SECONDS bounds every wait: for the JVM's attach listener and replies (default"
            + " 10 s) and for the command itself (default 10 min).",
        "[--timeout SECONDS] <pid> <command> [command options]");
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
    List<String> args = new ArrayList<>(line.getArgList());
    Duration timeout = DEFAULT_TIMEOUT;
    Duration commandTimeout = DEFAULT_COMMAND_TIMEOUT;
    if (!args.isEmpty() && args.get(0).equals("--timeout")) {
      if (args.size() < 2 || !args.get(1).matches("[1-9][0-9]{0,5}")) {
        throw new UsageException("--timeout takes whole seconds, e.g. '--timeout 30'");
      }
      timeout = Duration.ofSeconds(Long.parseLong(args.get(1)));
      commandTimeout = timeout;
      args = args.subList(2, args.size());
    }
    if (args.size() < 2) {
      throw new UsageException("say which JVM and what to run, e.g. 'attach 4242 stats'");
    }
    String pid = args.get(0);
    if (!pid.matches("[1-9][0-9]{0,9}") || Long.parseLong(pid) > Integer.MAX_VALUE) {
      throw new UsageException("<pid> must be a process id, got '" + pid + "'");
    }
    if (Long.parseLong(pid) == ProcessHandle.current().pid()) {
      throw new UsageException("<pid> is this process; name the JVM to look into");
    }
    List<String> command = new ArrayList<>(args.subList(1, args.size()));
    if (command.get(0).equals(AnalyzeCommand.OLD_NAME)) {
      command.set(0, "analyze");
      System.err.println("nativemem: '" + AnalyzeCommand.OLD_NAME + "' is now called 'analyze'");
    }
    if (!COMMANDS.contains(command.get(0))) {
      throw new UsageException(
          "unknown command '" + command.get(0) + "'; one of " + String.join(", ", COMMANDS));
    }
    if (command.contains("--help") || command.contains("-h")) {
      return help(command.get(0), pid);
    }
    command = fromHere(command);
    String jar = ownJar();
    AttachProtocol.Result result =
        AttachClient.run(
            Integer.parseInt(pid),
            jar,
            command,
            timeout,
            commandTimeout,
            rerun(jar, line.getArgList()));
    if (result == null) {
      throw new IllegalStateException(
          "process "
              + pid
              + " gave no result: it runs another nativemem agent that predates"
              + " attach; restart it, or attach with that version's jar");
    }
    // What the target printed is untrusted: no escape sequence of its reaches the terminal.
    out.print(TerminalText.escape(result.out));
    System.err.print(TerminalText.escape(result.err));
    return result.exitCode;
  }

  /**
   * {@code attach <pid> COMMAND --help}: the command's usage, printed here; nothing is run in the
   * JVM.
   */
  private int help(String name, String pid) {
    String through = NativeMemoryCli.LAUNCHER + " attach [--timeout SECONDS] " + pid + " " + name;
    if (CLI_COMMANDS.contains(name)) {
      NativeMemoryCli.run(out, System.err, name, "--help");
      out.println(
          "Through attach it runs inside process "
              + pid
              + ", with the same options: "
              + through
              + (name.equals("analyze")
                  ? " [options], on a heap profile the JVM dumps first"
                  : " [options]"));
      return 0;
    }
    List<String> usage = ATTACH_ONLY.get(name);
    out.println("Usage: " + through + " " + usage.get(0));
    out.println(usage.get(1));
    out.println("Runs inside process " + pid + "; add --timeout SECONDS to bound the wait.");
    return 0;
  }

  /**
   * {@code command} with each relative file or directory of an option made absolute from this
   * process's directory, not left to be resolved from the JVM's.
   */
  static List<String> fromHere(List<String> command) {
    List<String> resolved = new ArrayList<>(command);
    for (int i = 1; i + 1 < resolved.size(); i++) {
      String value = resolved.get(i + 1);
      if (PATH_OPTIONS.contains(resolved.get(i)) && !value.isEmpty() && !value.startsWith("-")) {
        resolved.set(i + 1, Paths.get(value).toAbsolutePath().toString());
      }
    }
    return resolved;
  }

  /** This command line, to run again as another user: the java of this JVM, quoted for sh. */
  private static String rerun(String jar, List<String> args) {
    List<String> words = new ArrayList<>();
    words.add(ProcessHandle.current().info().command().orElse("java"));
    words.add("-jar");
    words.add(jar);
    words.add("attach");
    words.addAll(args);
    StringBuilder line = new StringBuilder();
    for (String word : words) {
      line.append(line.length() == 0 ? "" : " ");
      line.append(
          word.matches("[A-Za-z0-9_./=:,+-]+") ? word : "'" + word.replace("'", "'\\''") + "'");
    }
    return TerminalText.escape(line.toString());
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
