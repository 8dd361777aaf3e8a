package dev.nativemem.tests;

import dev.nativemem.NativeMemory;
import dev.nativemem.base.Advice;
import dev.nativemem.memory.AllocatorInfo;
import dev.nativemem.memory.MemoryBreakdown;
import dev.nativemem.profile.HeapProfile;
import dev.nativemem.profile.HeapProfiler;
import java.util.ArrayList;
import java.util.List;
import java.util.zip.Deflater;

/**
 * docs/getting-started.md's "Use it from Java" block, as written there; ReadmeExampleTest runs it.
 */
public final class ReadmeExample {
  private static final List<Deflater> LIVE = new ArrayList<>();

  public static void main(String[] args) {
    // README block begins
    // Which allocator serves malloc: jemalloc 5.3.0 (/usr/lib/.../libjemalloc.so.2), or glibc.
    AllocatorInfo allocator = NativeMemory.allocator();
    // cgroup, RSS, JVM, NMT, allocator, handles: an aligned table; toJson() for machines.
    MemoryBreakdown breakdown = NativeMemory.breakdown();
    System.out.println(breakdown);
    // What to change, why, and the setting.
    for (Advice advice : NativeMemory.advice()) {
      System.out.println(advice);
    }
    // Needs a jemalloc started with prof:true ('java -jar nativemem.jar env' prints the lines).
    HeapProfiler profiler = NativeMemory.profiling();
    if (profiler.isAvailable()) {
      profiler.start();
      runWorkload();
      // A jeprof-compatible .heap with its .symbols/ sidecar, then its top sites without jeprof.
      HeapProfile profile = NativeMemory.dumpProfile();
      System.out.println(profile.analyze(10));
    }
    // README block ends
    System.out.println("ALLOCATOR " + allocator.kind());
  }

  /** Native memory that stays live until the dump: deflaters at level 9 hold zlib's buffers. */
  private static void runWorkload() {
    for (int i = 0; i < 200; i++) {
      LIVE.add(new Deflater(9));
    }
  }
}
