package dev.nativemem.cli;

import java.io.PrintStream;
import org.apache.commons.cli.CommandLine;
import org.apache.commons.cli.Option;
import org.apache.commons.cli.Options;

/**
 * One subcommand of the CLI: its name, what it does in one line, its options and positional
 * parameters, and the work. Parsing, {@code --help} and exit codes are {@link NativeMemoryCli}'s.
 */
abstract class CliCommand {
  static final Option HELP = Option.builder("h").longOpt("help").desc("Show this help.").get();

  /** Where the command prints: standard output, or the attach channel inside a target JVM. */
  PrintStream out = System.out;

  private final String name;
  private final String summary;
  private final String parameters;

  /**
   * @param parameters the positional parameters as the usage line shows them ({@code "<dump>"}), or
   *     {@code ""}
   */
  CliCommand(String name, String summary, String parameters) {
    this.name = name;
    this.summary = summary;
    this.parameters = parameters;
  }

  final String name() {
    return name;
  }

  final String summary() {
    return summary;
  }

  final String parameters() {
    return parameters;
  }

  /** Whether options after the first positional parameter belong to that parameter's command. */
  boolean passesThrough() {
    return false;
  }

  /** This command's options; {@code --help} is added by the CLI. */
  abstract Options options();

  /**
   * Does the work.
   *
   * @return the exit code: 0 on success
   * @throws UsageException for arguments that do not fit together (exit code 2, with usage)
   * @throws RuntimeException when the work fails (exit code 1, its message shown)
   */
  abstract int run(CommandLine line) throws Exception;

  /** The value of a whole-number option, or {@code fallback} when it is absent. */
  static long longValue(CommandLine line, String option, long fallback) {
    String text = line.getOptionValue(option);
    if (text == null) {
      return fallback;
    }
    try {
      return Long.parseLong(text.trim());
    } catch (NumberFormatException e) {
      throw new UsageException("--" + option + " takes a whole number, got '" + text + "'");
    }
  }

  /** Arguments that do not fit: the CLI prints the message and this command's usage, exit 2. */
  static final class UsageException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    UsageException(String message) {
      super(message);
    }
  }
}
