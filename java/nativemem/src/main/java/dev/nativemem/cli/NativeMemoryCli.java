package dev.nativemem.cli;

import dev.nativemem.NativeMemory;
import dev.nativemem.base.text.TerminalText;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.commons.cli.CommandLine;
import org.apache.commons.cli.DefaultParser;
import org.apache.commons.cli.HelpFormatter;
import org.apache.commons.cli.Options;
import org.apache.commons.cli.ParseException;

/**
 * {@code java -jar nativemem.jar <command>}: the jar as a command-line tool.
 *
 * <p>Options are parsed by Apache Commons CLI (shaded): a JVM that runs one command loads about 30
 * of its classes, so the CLI starts in about twice a hello-world JVM's CPU time
 * (docs/performance.md). Exit codes: 0 on success and for help, 2 on a usage error, 1 when the work
 * fails.
 */
public final class NativeMemoryCli {
  private static final int WIDTH = 100;

  /**
   * What users type to run the CLI, as the usage shows it: there is no {@code nativemem} launcher;
   * the jar is the program, named as this one is ({@code java -jar nativemem-0.1.0.jar}).
   */
  static final String LAUNCHER = launcher();

  private final Map<String, CliCommand> commands = new LinkedHashMap<>();

  private NativeMemoryCli() {
    for (CliCommand command :
        new CliCommand[] {
          new VersionCommand(),
          new StatsCommand(),
          new BreakdownCommand(),
          new AdviceCommand(),
          new DemoCommand(),
          new EnvCommand(),
          new AnalyzeCommand(),
          new KnownLeaksCommand(),
          new IncidentCommand(),
          new SettingsCommand(),
          new AttachCommand()
        }) {
      commands.put(command.name(), command);
    }
  }

  public static void main(String[] args) {
    System.exit(run(args));
  }

  /** Runs the CLI and returns its exit code: 0 on success, 2 on a usage error, 1 on failure. */
  public static int run(String... args) {
    return run(System.out, System.err, args);
  }

  /** The same, printing to {@code out} and {@code err} (an attached command's channel). */
  public static int run(PrintStream stdout, PrintStream stderr, String... args) {
    return new NativeMemoryCli().execute(stdout, stderr, args);
  }

  private int execute(PrintStream stdout, PrintStream stderr, String[] args) {
    PrintWriter out = new PrintWriter(stdout, true);
    PrintWriter err = new PrintWriter(stderr, true);
    if (args.length == 0 || isHelp(args[0])) {
      usage(out);
      return 0;
    }
    if (args[0].equals("-V") || args[0].equals("--version")) {
      out.println(NativeMemory.version());
      return 0;
    }
    if (args[0].equals("help")) {
      return help(args, out, err);
    }
    CliCommand command = commands.get(args[0]);
    if (command == null && args[0].equals(AnalyzeCommand.OLD_NAME)) {
      command = commands.get("analyze");
      err.println("nativemem: '" + AnalyzeCommand.OLD_NAME + "' is now called 'analyze'");
    }
    if (command == null) {
      err.println("nativemem: unknown command '" + args[0] + "'");
      usage(err);
      return 2;
    }
    Options options = command.options().addOption(CliCommand.HELP);
    String[] rest = java.util.Arrays.copyOfRange(args, 1, args.length);
    command.out = stdout;
    try {
      CommandLine line =
          DefaultParser.builder().get().parse(options, rest, command.passesThrough());
      if (line.hasOption(CliCommand.HELP)) {
        usage(command, out);
        return 0;
      }
      return command.run(line);
    } catch (ParseException | CliCommand.UsageException e) {
      err.println(TerminalText.escape("nativemem " + command.name() + ": " + e.getMessage()));
      usage(command, err);
      return 2;
    } catch (Exception e) {
      // Messages may quote a dump's or a bundle's contents: shown, never obeyed.
      err.println(TerminalText.escape("nativemem: " + e.getMessage()));
      return 1;
    }
  }

  private int help(String[] args, PrintWriter out, PrintWriter err) {
    if (args.length == 1) {
      usage(out);
      return 0;
    }
    CliCommand command = commands.get(args[1]);
    if (command == null || args.length > 2) {
      err.println(
          "nativemem help: no command '"
              + String.join(" ", List.of(args).subList(1, args.length))
              + "'");
      usage(err);
      return 2;
    }
    usage(command, out);
    return 0;
  }

  private static boolean isHelp(String arg) {
    return arg.equals("-h") || arg.equals("--help");
  }

  private static String launcher() {
    String jar = "nativemem.jar";
    try {
      java.security.CodeSource source = NativeMemoryCli.class.getProtectionDomain().getCodeSource();
      if (source != null) {
        java.nio.file.Path name =
            java.nio.file.Paths.get(source.getLocation().toURI()).getFileName();
        if (name != null && name.toString().endsWith(".jar")) {
          jar = name.toString();
        }
      }
    } catch (java.net.URISyntaxException | RuntimeException e) {
      // No file to name (a class loader without locations): the generic name.
    }
    return TerminalText.escape("java -jar " + jar);
  }

  /** The top-level usage: every command with its summary. */
  private void usage(PrintWriter to) {
    to.println("Usage: " + LAUNCHER + " [-hV] [COMMAND]");
    to.println("See, profile and test the native memory of a JVM.");
    to.println("  -h, --help      Show this help message and exit.");
    to.println("  -V, --version   Print version information and exit.");
    to.println("Commands:");
    HelpFormatter formatter = HelpFormatter.builder().setPrintWriter(to).get();
    int width = commands.keySet().stream().mapToInt(String::length).max().orElse(0) + 4;
    for (CliCommand command : commands.values()) {
      String name = String.format("  %-" + (width - 2) + "s", command.name());
      formatter.printWrapped(to, WIDTH, width, name + command.summary());
    }
    formatter.printWrapped(
        to,
        WIDTH,
        width,
        String.format("  %-" + (width - 2) + "s", "help") + "Show the usage of one command.");
    to.println("'" + LAUNCHER + " COMMAND --help' shows a command's options.");
    to.flush();
  }

  /** One command's usage: its synopsis, what it does, its options. */
  private static void usage(CliCommand command, PrintWriter to) {
    Options options = command.options().addOption(CliCommand.HELP);
    String synopsis =
        LAUNCHER
            + " "
            + command.name()
            + " [options]"
            + (command.parameters().isEmpty() ? "" : " " + command.parameters());
    HelpFormatter formatter = HelpFormatter.builder().setPrintWriter(to).get();
    formatter.printHelp(to, WIDTH, synopsis, command.summary(), options, 2, 2, "", false);
    to.flush();
  }
}
