package dev.nativemem.memory;

import static dev.nativemem.ContractFixtures.check;
import static dev.nativemem.ContractFixtures.checkWrittenBack;

import dev.nativemem.NativeMemory;
import dev.nativemem.handles.NativeHandles;
import dev.nativemem.internal.JsonBinding;
import org.junit.jupiter.api.Test;

/**
 * The JSON contract with the native library for {@code dev.nativemem.memory}: see {@link
 * dev.nativemem.ContractFixtures}.
 */
class MemoryContractFixturesTest {
  @Test
  void allocatorInfo() {
    checkWrittenBack(
        "allocator-jemalloc.json", json -> JsonBinding.read(AllocatorInfo.class, json));
    checkWrittenBack("allocator-glibc.json", json -> JsonBinding.read(AllocatorInfo.class, json));
  }

  @Test
  void allocatorStats() {
    checkWrittenBack("allocator-stats-jemalloc.json", AllocatorStats::of);
    checkWrittenBack("allocator-stats-glibc.json", AllocatorStats::of);
  }

  @Test
  void processMemory() {
    checkWrittenBack("process-memory.json", json -> JsonBinding.read(ProcessMemory.class, json));
  }

  @Test
  void nativeViewOfTheBreakdown() {
    check(
        "native-view.json",
        json ->
            MemoryBreakdownReader.read(
                json, null, NativeHandles.report(), MemoryBreakdown.View.COMMITTED),
        // In toJson()'s "process" and "cpus", passed through whole.
        "process.peak_rss_bytes",
        "process.virtual_bytes",
        "container_cpus.cgroup_version");
  }

  @Test
  void memorySnapshot() {
    check(
        "memory-snapshot.json",
        json ->
            MemorySnapshot.of(
                json,
                null,
                NativeHandles.report(),
                new Long[] {JvmRegions.residentTotal(json), null},
                System.nanoTime()),
        // In toJson()'s "breakdown", passed through whole, as for the native view above.
        "native_view.process.peak_rss_bytes",
        "native_view.process.virtual_bytes",
        "native_view.container_cpus.cgroup_version");
  }

  @Test
  void residentRanges() {
    check("resident-ranges.json", JvmRegions::residentTotal);
  }

  @Test
  void remedyResult() {
    checkWrittenBack(
        "remedy.json", json -> JsonBinding.read(NativeMemory.RemedyResult.class, json));
  }
}
