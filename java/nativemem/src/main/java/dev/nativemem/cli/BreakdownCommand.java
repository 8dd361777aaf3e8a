package dev.nativemem.cli;

import dev.nativemem.MemoryBreakdown;
import dev.nativemem.NativeMemory;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

@Command(
    name = "breakdown",
    description =
        "Line up the container's memory limit and usage, RSS, the JVM's memory, the allocator,"
            + " and what is left unaccounted.")
final class BreakdownCommand implements Runnable {
  @Option(names = "--json", description = "Print one JSON object instead of a table.")
  boolean json;

  @Option(
      names = "--committed",
      description =
          "Count JVM memory at its committed size (NMT, pools) instead of the heap's and code"
              + " cache's resident pages; unaccounted then goes negative in a young JVM.")
  boolean committed;

  @Override
  public void run() {
    MemoryBreakdown breakdown =
        NativeMemory.breakdown(
            committed ? MemoryBreakdown.View.COMMITTED : MemoryBreakdown.View.RESIDENT);
    System.out.println(json ? breakdown.toJson() : breakdown.toString());
  }
}
