package dev.nativemem.cli;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;

/** One run of the CLI in this JVM, its standard output and error captured. */
final class CliRun {
  final int exit;
  final String out;
  final String err;

  private CliRun(int exit, String out, String err) {
    this.exit = exit;
    this.out = out;
    this.err = err;
  }

  static CliRun of(String... args) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    int exit =
        NativeMemoryCli.run(
            new PrintStream(out, true, StandardCharsets.UTF_8),
            new PrintStream(err, true, StandardCharsets.UTF_8),
            args);
    return new CliRun(
        exit, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
  }

  @Override
  public String toString() {
    return "exit " + exit + "\n" + out + err;
  }
}
