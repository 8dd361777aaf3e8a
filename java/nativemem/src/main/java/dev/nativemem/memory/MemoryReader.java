package dev.nativemem.memory;

import dev.nativemem.base.Advice;
import dev.nativemem.handles.NativeHandles;
import dev.nativemem.internal.Json;
import dev.nativemem.internal.JsonBinding;
import dev.nativemem.internal.NativeBridge;
import dev.nativemem.internal.NativeLibraryLoader;
import dev.nativemem.memory.reading.NmtSummary;
import java.util.List;
import java.util.Objects;

/**
 * Builds this package's values from the native library's answers: the reader behind {@code
 * NativeMemory}'s memory methods, and the one the watch and the metrics use below it. Each method
 * loads the library first.
 */
public final class MemoryReader {
  private MemoryReader() {}

  /** Which allocator serves this process's {@code malloc}. */
  public static AllocatorInfo allocator() {
    NativeLibraryLoader.load();
    return new AllocatorInfo(Json.parseObject(NativeBridge.call("allocator")));
  }

  /** Resident memory of this process, from {@code /proc/self/status}. */
  public static ProcessMemory processMemory() {
    NativeLibraryLoader.load();
    return JsonBinding.read(
        ProcessMemory.class, Json.parseObject(NativeBridge.call("process_memory")));
  }

  /** One numeric {@code mallctl} key from the public-read allow-list. */
  public static long mallctl(String key) {
    Objects.requireNonNull(key, "key");
    NativeLibraryLoader.load();
    return NativeBridge.mallctlRead(key);
  }

  /** The allocator's statistics. */
  public static AllocatorStats stats() {
    NativeLibraryLoader.load();
    return new AllocatorStats(Json.parseObject(NativeBridge.call("allocator_stats")));
  }

  /** The allocator's own text report. */
  public static String rawAllocatorStats() {
    NativeLibraryLoader.load();
    return (String) Json.parse(NativeBridge.call("raw_allocator_stats"));
  }

  /** The breakdown with JVM memory counted as {@code view} says. */
  public static MemoryBreakdown breakdown(MemoryBreakdown.View view) {
    Objects.requireNonNull(view, "view");
    NativeLibraryLoader.load();
    return MemoryBreakdownReader.read(
        Json.parseObject(NativeBridge.call("native_view")),
        NmtSummary.read(),
        NativeHandles.summary(),
        view);
  }

  /** The latest snapshot if younger than {@link MemorySnapshot#MAX_AGE}, else a new one. */
  public static MemorySnapshot snapshot() {
    return MemorySnapshot.current();
  }

  /** Advice from the allocator, the resident breakdown and the environment. */
  public static List<Advice> advice() {
    return AdviceRules.evaluate(
        allocator(),
        breakdown(MemoryBreakdown.View.RESIDENT),
        NativeHandles.report(),
        System.getenv());
  }

  /**
   * Advice from the allocator, {@code snapshot}'s breakdown and handles, and the environment: the
   * figures it quotes (headroom, malloc outside the JVM, handle counts) are the snapshot's.
   */
  public static List<Advice> advice(MemorySnapshot snapshot) {
    return AdviceRules.evaluate(
        allocator(), snapshot.breakdown(), snapshot.breakdown().handles(), System.getenv());
  }

  /** The run-time remedies. */
  public static Remedies remedies() {
    NativeLibraryLoader.load();
    return Remedies.get();
  }
}
