package dev.nativemem.cli;

import dev.nativemem.NativeMemory;
import dev.nativemem.base.text.TerminalText;
import dev.nativemem.memory.MemoryBreakdown;
import org.apache.commons.cli.CommandLine;
import org.apache.commons.cli.Options;

final class BreakdownCommand extends CliCommand {
  BreakdownCommand() {
    super(
        "breakdown",
        "Line up the container's memory limit and usage, RSS, the JVM's memory, the allocator,"
            + " and what is left unaccounted.",
        "");
  }

  @Override
  Options options() {
    return new Options()
        .addOption(null, "json", false, "Print one JSON object instead of a table.")
        .addOption(
            null,
            "committed",
            false,
            "Count JVM memory at its committed size (NMT, pools) instead of the heap's and code"
                + " cache's resident pages; unaccounted then goes negative in a young JVM.");
  }

  @Override
  int run(CommandLine line) {
    MemoryBreakdown breakdown =
        NativeMemory.breakdown(
            line.hasOption("committed")
                ? MemoryBreakdown.View.COMMITTED
                : MemoryBreakdown.View.RESIDENT);
    out.println(
        line.hasOption("json") ? breakdown.toJson() : TerminalText.escape(breakdown.toString()));
    return 0;
  }
}
