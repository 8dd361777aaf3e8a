package dev.nativemem.cli;

import dev.nativemem.NativeMemory;
import dev.nativemem.base.text.TerminalText;
import dev.nativemem.memory.AllocatorInfo;
import dev.nativemem.memory.AllocatorStats;
import dev.nativemem.memory.ProcessMemory;
import org.apache.commons.cli.CommandLine;
import org.apache.commons.cli.Options;

final class StatsCommand extends CliCommand {
  StatsCommand() {
    super(
        "stats",
        "Print the allocator serving this JVM's malloc, its configuration and statistics, and the"
            + " process's resident memory.",
        "");
  }

  @Override
  Options options() {
    return new Options()
        .addOption(null, "json", false, "Print one JSON object instead of text.")
        .addOption(
            null,
            "raw",
            false,
            "Print the allocator's own statistics instead, as it writes them: jemalloc's"
                + " malloc_stats_print JSON or glibc's malloc_info XML (for bug reports).");
  }

  @Override
  int run(CommandLine line) {
    if (line.hasOption("raw")) {
      out.println(TerminalText.escape(NativeMemory.rawAllocatorStats()));
      return 0;
    }
    AllocatorInfo allocator = NativeMemory.allocator();
    AllocatorStats stats = NativeMemory.stats();
    ProcessMemory process = NativeMemory.processMemory();
    if (line.hasOption("json")) {
      out.println(
          "{\"allocator\":"
              + allocator.toJson()
              + ",\"stats\":"
              + stats.toJson()
              + ",\"process\":"
              + process.toJson()
              + "}");
    } else {
      // An attached target's allocator names its own object and options: shown, never obeyed.
      out.println(
          TerminalText.escape(
              "allocator  "
                  + allocator
                  + "\nprofiling  "
                  + NativeMemory.profiling()
                  + "\nprocess    "
                  + process
                  + "\n"
                  + stats));
    }
    return 0;
  }
}
