package dev.nativemem.cli;

import picocli.CommandLine;
import picocli.CommandLine.Command;

/**
 * {@code java -jar nativemem.jar <command>}: the jar as a command-line tool.
 *
 * <p>Arguments are parsed by picocli (shaded into the jar): subcommands, {@code --help} on each,
 * usage on errors with exit code 2, for about 400 KiB of jar.
 */
@Command(
    name = "nativemem",
    mixinStandardHelpOptions = true,
    versionProvider = VersionCommand.Provider.class,
    description = "See, profile and test the native memory of a JVM.",
    subcommands = {
      VersionCommand.class,
      StatsCommand.class,
      BreakdownCommand.class,
      AdviceCommand.class,
      DemoCommand.class,
      EnvCommand.class,
      ReportCommand.class,
      CommandLine.HelpCommand.class
    })
public final class NativeMemoryCli implements Runnable {
  @CommandLine.Spec CommandLine.Model.CommandSpec spec;

  public static void main(String[] args) {
    System.exit(run(args));
  }

  /** Runs the CLI and returns its exit code: 0 on success, 2 on a usage error, 1 on failure. */
  public static int run(String... args) {
    CommandLine cli = new CommandLine(new NativeMemoryCli());
    cli.setParameterExceptionHandler(NativeMemoryCli::usageError);
    cli.setExecutionExceptionHandler(NativeMemoryCli::failure);
    return cli.execute(args);
  }

  /** Bad arguments: the message, suggestions and usage on stderr; exit code 2. */
  private static int usageError(CommandLine.ParameterException e, String[] args) {
    CommandLine failed = e.getCommandLine();
    failed.getErr().println(e.getMessage());
    CommandLine.UnmatchedArgumentException.printSuggestions(e, failed.getErr());
    failed.usage(failed.getErr());
    return CommandLine.ExitCode.USAGE;
  }

  /** A command failed: its message on stderr; exit code 1. */
  private static int failure(
      Exception e, CommandLine commandLine, CommandLine.ParseResult parseResult) {
    commandLine.getErr().println("nativemem: " + e.getMessage());
    return 1;
  }

  /** No command: print usage. */
  @Override
  public void run() {
    spec.commandLine().usage(spec.commandLine().getOut());
  }
}
