package dev.nativemem.cli;

import dev.nativemem.AllocatorInfo;
import dev.nativemem.NativeMemory;
import dev.nativemem.ProcessMemory;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

@Command(
    name = "stats",
    description =
        "Print the allocator serving this JVM's malloc and the process's resident memory.")
final class StatsCommand implements Runnable {
  @Option(names = "--json", description = "Print one JSON object instead of text.")
  boolean json;

  @Override
  public void run() {
    AllocatorInfo allocator = NativeMemory.allocator();
    ProcessMemory process = NativeMemory.processMemory();
    if (json) {
      System.out.println(
          "{\"allocator\":" + allocator.toJson() + ",\"process\":" + process.toJson() + "}");
    } else {
      System.out.println("allocator  " + allocator);
      System.out.println("process    " + process);
    }
  }
}
