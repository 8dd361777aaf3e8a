package dev.nativemem.memory;

import java.lang.management.MemoryUsage;
import java.util.List;

/** The JVM's own figures a breakdown needs, read at one moment by {@link MemoryBreakdownReader}. */
final class JvmMemory {
  final MemoryUsage heap;
  final List<MemoryBreakdown.Pool> nonHeapPools;
  final List<MemoryBreakdown.Pool> bufferPools;

  /** The heap's resident bytes; null in the committed view or when its pages are not found. */
  final Long heapResidentBytes;

  /** The code cache's resident bytes; null in the committed view or when not found. */
  final Long codeCacheResidentBytes;

  JvmMemory(
      MemoryUsage heap,
      List<MemoryBreakdown.Pool> nonHeapPools,
      List<MemoryBreakdown.Pool> bufferPools,
      Long heapResidentBytes,
      Long codeCacheResidentBytes) {
    this.heap = heap;
    this.nonHeapPools = nonHeapPools;
    this.bufferPools = bufferPools;
    this.heapResidentBytes = heapResidentBytes;
    this.codeCacheResidentBytes = codeCacheResidentBytes;
  }
}
