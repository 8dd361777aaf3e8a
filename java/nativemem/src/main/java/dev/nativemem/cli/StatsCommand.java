package dev.nativemem.cli;

import dev.nativemem.AllocatorInfo;
import dev.nativemem.AllocatorStats;
import dev.nativemem.NativeMemory;
import dev.nativemem.ProcessMemory;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

@Command(
    name = "stats",
    description =
        "Print the allocator serving this JVM's malloc, its configuration and statistics, and the"
            + " process's resident memory.")
final class StatsCommand implements Runnable {
  @Option(names = "--json", description = "Print one JSON object instead of text.")
  boolean json;

  @Option(
      names = "--report",
      description =
          "Print the allocator's own full report instead: jemalloc's malloc_stats_print JSON or"
              + " glibc's malloc_info XML (for bug reports).")
  boolean report;

  @Override
  public void run() {
    if (report) {
      System.out.println(NativeMemory.allocatorReport());
      return;
    }
    AllocatorInfo allocator = NativeMemory.allocator();
    AllocatorStats stats = NativeMemory.stats();
    ProcessMemory process = NativeMemory.processMemory();
    if (json) {
      System.out.println(
          "{\"allocator\":"
              + allocator.toJson()
              + ",\"stats\":"
              + stats.toJson()
              + ",\"process\":"
              + process.toJson()
              + "}");
    } else {
      System.out.println("allocator  " + allocator);
      System.out.println("process    " + process);
      System.out.println(stats);
    }
  }
}
