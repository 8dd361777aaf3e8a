package dev.nativemem.cli;

import dev.nativemem.AllocatorInfo;
import dev.nativemem.NativeMemory;
import dev.nativemem.ProcessMemory;
import dev.nativemem.internal.ByteFormat;
import org.apache.commons.cli.CommandLine;
import org.apache.commons.cli.Options;

final class DemoCommand extends CliCommand {
  DemoCommand() {
    super(
        "demo",
        "Show what nativemem sees in this JVM, then a heap profile of a RocksDB and zip workload.",
        "");
  }

  @Override
  Options options() {
    return new Options();
  }

  @Override
  int run(CommandLine line) {
    System.out.println("nativemem demo: " + NativeMemory.version());
    System.out.println();
    AllocatorInfo allocator = NativeMemory.allocator();
    System.out.println(
        "Allocator serving malloc: "
            + allocator.kind().name().toLowerCase(java.util.Locale.ROOT)
            + " "
            + allocator.version());
    System.out.println("  defined in " + allocator.mallocObject());
    if (!allocator.isJemalloc()) {
      System.out.println(
          "  (glibc: no per-arena statistics or heap profiles; preload jemalloc to get them)");
    }
    ProcessMemory process = NativeMemory.processMemory();
    Runtime heap = Runtime.getRuntime();
    System.out.println();
    System.out.println("Process resident memory (kernel's view)");
    System.out.println(row("RSS", process.rssBytes()));
    System.out.println(row("  anonymous", process.rssAnonBytes()));
    System.out.println(row("  file-backed", process.rssFileBytes()));
    System.out.println(row("  shared memory", process.rssShmemBytes()));
    System.out.println(row("peak RSS", process.peakRssBytes()));
    System.out.println(
        row("Java heap committed", heap.totalMemory()) + "   (reserved, not all resident)");
    System.out.println(String.format("  %-24s %10d", "threads", process.threads()));
    dev.nativemem.cli.demo.BreakdownDemo.run(System.out);
    dev.nativemem.cli.demo.HandlesDemo.run();
    dev.nativemem.cli.demo.ProfilingDemo.run();
    return 0;
  }

  private static String row(String label, long bytes) {
    return String.format("  %-24s %10s", label, ByteFormat.human(bytes));
  }
}
