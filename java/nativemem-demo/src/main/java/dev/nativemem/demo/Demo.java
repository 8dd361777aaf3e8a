package dev.nativemem.demo;

import dev.nativemem.NativeMemory;
import dev.nativemem.internal.ByteFormat;
import dev.nativemem.memory.AllocatorInfo;
import dev.nativemem.memory.ProcessMemory;

/**
 * The CLI's {@code demo}: what nativemem sees in this JVM, then the handle incidents and a heap
 * profile of a RocksDB and zip workload. The core jar's {@code demo} command finds this class on
 * the class path (the nativemem-demo jar carries it) and calls {@link #run()}.
 */
public final class Demo {
  private Demo() {}

  /** Runs every section; returns the CLI's exit code. */
  public static int run() {
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
    BreakdownDemo.run(System.out);
    HandlesDemo.run();
    ProfilingDemo.run();
    return 0;
  }

  private static String row(String label, long bytes) {
    return String.format("  %-24s %10s", label, ByteFormat.human(bytes));
  }
}
