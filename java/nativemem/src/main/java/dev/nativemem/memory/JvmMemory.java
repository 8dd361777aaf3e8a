package dev.nativemem.memory;

import java.util.List;

/** The JVM's own figures a breakdown needs, read at one moment by {@link MemoryBreakdownReader}. */
final class JvmMemory {
  final long heapUsedBytes;
  final long heapCommittedBytes;

  /** The heap's limit; -1 when it has none. */
  final long heapMaxBytes;

  final List<MemoryBreakdown.Pool> nonHeapPools;
  final List<MemoryBreakdown.Pool> bufferPools;

  /** Why the memory and buffer pools are absent (no {@code java.management}), or null. */
  final String poolsAbsence;

  /** The heap's resident bytes; null in the committed view or when its pages are not found. */
  final Long heapResidentBytes;

  /** The code cache's resident bytes; null in the committed view or when not found. */
  final Long codeCacheResidentBytes;

  JvmMemory(
      long heapUsedBytes,
      long heapCommittedBytes,
      long heapMaxBytes,
      List<MemoryBreakdown.Pool> nonHeapPools,
      List<MemoryBreakdown.Pool> bufferPools,
      String poolsAbsence,
      Long heapResidentBytes,
      Long codeCacheResidentBytes) {
    this.heapUsedBytes = heapUsedBytes;
    this.heapCommittedBytes = heapCommittedBytes;
    this.heapMaxBytes = heapMaxBytes;
    this.nonHeapPools = nonHeapPools;
    this.bufferPools = bufferPools;
    this.poolsAbsence = poolsAbsence;
    this.heapResidentBytes = heapResidentBytes;
    this.codeCacheResidentBytes = codeCacheResidentBytes;
  }
}
