package dev.nativemem.memory;

import dev.nativemem.base.Advice;
import dev.nativemem.handles.NativeHandles;
import dev.nativemem.internal.Json;
import dev.nativemem.internal.JsonBinding;
import dev.nativemem.internal.NativeBridge;
import dev.nativemem.internal.NativeLibraryLoader;
import dev.nativemem.memory.reading.NmtSummary;
import dev.nativemem.profile.sampling.SamplingStatus;
import java.util.List;
import java.util.Map;
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
    return JsonBinding.read(AllocatorInfo.class, Json.parseObject(NativeBridge.call("allocator")));
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
    return AllocatorStats.of(Json.parseObject(NativeBridge.call("allocator_stats")));
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

  private static final Object SNAPSHOT_LOCK = new Object();
  private static MemorySnapshot latest;

  /** The latest snapshot if younger than {@link MemorySnapshot#MAX_AGE}, else a new one. */
  public static MemorySnapshot snapshot() {
    synchronized (SNAPSHOT_LOCK) {
      long now = System.nanoTime();
      if (latest == null || latest.olderThanMaxAgeAt(now)) {
        latest = readSnapshot(now);
      }
      return latest;
    }
  }

  /**
   * One reading, each source asked once: the native view, the allocator's statistics and the
   * resident bytes of the heap and code cache in one native call (the {@code memory_snapshot} job,
   * one refresh of the allocator's statistics for both), then NMT and the full handle report (the
   * breakdown's handles, from which the metrics also take their sites), then the JVM's pools.
   */
  private static MemorySnapshot readSnapshot(long takenNanos) {
    NativeLibraryLoader.load();
    Map<String, Object> json =
        Json.parseObject(NativeBridge.call("memory_snapshot", JvmRegions.rangesRequest()));
    return MemorySnapshot.of(
        json, NmtSummary.read(), NativeHandles.report(), JvmRegions.split(json), takenNanos);
  }

  /**
   * Advice from the allocator, the resident breakdown, the environment and the heap-profiling
   * engine that can run here.
   */
  public static List<Advice> advice() {
    return AdviceRules.evaluate(
        allocator(),
        breakdown(MemoryBreakdown.View.RESIDENT),
        NativeHandles.report(),
        System.getenv(),
        SamplingStatus.read());
  }

  /**
   * Advice from the allocator, {@code snapshot}'s breakdown and handles, and the environment: the
   * figures it quotes (headroom, malloc outside the JVM, handle counts) are the snapshot's.
   */
  public static List<Advice> advice(MemorySnapshot snapshot) {
    return AdviceRules.evaluate(
        allocator(),
        snapshot.breakdown(),
        snapshot.breakdown().handles(),
        System.getenv(),
        SamplingStatus.read());
  }
}
