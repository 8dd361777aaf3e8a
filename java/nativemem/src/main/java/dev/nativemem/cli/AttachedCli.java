package dev.nativemem.cli;

import dev.nativemem.attach.AttachedCommand;
import java.lang.instrument.Instrumentation;

/**
 * The agent's entry for a command of {@code nativemem attach} inside the target JVM: runs it
 * through {@link AttachedCommand}, handing in this CLI for the commands the CLI itself runs (stats,
 * breakdown, advice, analyze), so the attach channel never names the CLI.
 */
public final class AttachedCli {
  private AttachedCli() {}

  /** Leaves {@code reason} as the failed result of the command in {@code argument}. */
  public static void refuse(String argument, String reason) {
    AttachedCommand.refuse(argument, reason);
  }

  /** Runs the command in {@code argument} and leaves its sealed result for the CLI to read. */
  public static void run(String argument, Instrumentation instrumentation) {
    // A lambda, not a method reference: the CLI's class loads only for a command that runs it.
    AttachedCommand.run(
        argument, instrumentation, (out, err, args) -> NativeMemoryCli.run(out, err, args));
  }
}
