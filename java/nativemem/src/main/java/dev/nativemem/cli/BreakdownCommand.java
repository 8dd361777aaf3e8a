package dev.nativemem.cli;

import dev.nativemem.MemoryBreakdown;
import dev.nativemem.NativeMemory;
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
        .addOption(null, "json", false, "Print one JSON object instead of a table.");
  }

  @Override
  int run(CommandLine line) {
    MemoryBreakdown breakdown = NativeMemory.breakdown();
    System.out.println(line.hasOption("json") ? breakdown.toJson() : breakdown.toString());
    return 0;
  }
}
