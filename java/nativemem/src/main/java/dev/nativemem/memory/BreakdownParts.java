package dev.nativemem.memory;

import dev.nativemem.handles.HandleReport;
import dev.nativemem.internal.JsonBinding;
import dev.nativemem.memory.reading.NmtSummary;
import java.lang.management.BufferPoolMXBean;
import java.lang.management.MemoryPoolMXBean;
import java.lang.management.MemoryUsage;
import java.util.ArrayList;
import java.util.List;

/**
 * The parts of a {@link MemoryBreakdown}, each bound by {@link JsonBinding}: its fields are the
 * keys of the breakdown's JSON. The native view's parts ({@link Cpus}, {@link Allocator}, and the
 * container's {@link dev.nativemem.memory.reading.ContainerMemory}, which {@code attach} reads too)
 * are read from the native library's JSON under the Rust structs' own names; the JVM's and the
 * handles' parts are built from what the JVM says.
 */
final class BreakdownParts {
  private BreakdownParts() {}

  /** The CPUs the container grants, as the JVM computes them: Rust's {@code ContainerCpuView}. */
  static final class Cpus {
    long affinity;
    String cgroupVersion;
    Long quotaMillicpus;
    long effective;

    private Cpus() {}
  }

  /** The allocator's totals: Rust's {@code AllocatorSummary}. */
  static final class Allocator {
    String kind;
    long allocatedBytes;
    long footprintBytes;
    Long residentBytes;
    Long dirtyBytes;

    private Allocator() {}
  }

  /** The JVM's own figures, read at one moment. */
  static final class Jvm {
    final long heapUsedBytes;
    final long heapCommittedBytes;

    /** The heap's limit; -1 when it has none. */
    final long heapMaxBytes;

    /** {@code [[start, end], ...]} as unsigned hex text; null in the committed view. */
    final List<List<String>> heapRanges;

    final List<List<String>> codeCacheRanges;
    final List<MemoryPool> nonHeapPools;
    final List<BufferPool> bufferPools;

    /** NMT's totals; null when NMT is off. */
    final Nmt nmt;

    final Absent absent;

    Jvm(
        long heapUsedBytes,
        long heapCommittedBytes,
        long heapMaxBytes,
        List<List<String>> heapRanges,
        List<List<String>> codeCacheRanges,
        List<MemoryPool> nonHeapPools,
        List<BufferPool> bufferPools,
        Nmt nmt,
        Absent absent) {
      this.heapUsedBytes = heapUsedBytes;
      this.heapCommittedBytes = heapCommittedBytes;
      this.heapMaxBytes = heapMaxBytes;
      this.heapRanges = heapRanges;
      this.codeCacheRanges = codeCacheRanges;
      this.nonHeapPools = List.copyOf(nonHeapPools);
      this.bufferPools = List.copyOf(bufferPools);
      this.nmt = nmt;
      this.absent = absent;
    }

    /** Committed bytes of the non-heap memory pools. */
    long nonHeapCommittedBytes() {
      return nonHeapPools.stream().mapToLong(p -> p.committedBytes).sum();
    }

    /** {@code ranges} ({@code [start, end]} pairs) as unsigned hex text ({@code 0x…}). */
    static List<List<String>> hex(List<long[]> ranges) {
      List<List<String>> out = new ArrayList<>();
      for (long[] range : ranges) {
        out.add(List.of("0x" + Long.toHexString(range[0]), "0x" + Long.toHexString(range[1])));
      }
      return out;
    }
  }

  /**
   * A memory pool outside the heap (metaspace, class space, code cache). Only the MXBeans' reader
   * builds one, where {@code java.management} is.
   */
  static final class MemoryPool {
    final String name;
    final long usedBytes;
    final long committedBytes;

    MemoryPool(MemoryPoolMXBean pool) {
      MemoryUsage usage = pool.getUsage();
      this.name = pool.getName();
      this.usedBytes = usage.getUsed();
      this.committedBytes = usage.getCommitted();
    }

    boolean isCodeCache() {
      return name.startsWith("CodeHeap") || name.equals("Code Cache");
    }
  }

  /** A buffer pool ({@code direct}, {@code mapped}), built as {@link MemoryPool} is. */
  static final class BufferPool {
    final String name;
    final long count;
    final long usedBytes;
    final long capacityBytes;

    BufferPool(BufferPoolMXBean pool) {
      this.name = pool.getName();
      this.count = pool.getCount();
      this.usedBytes = pool.getMemoryUsed();
      this.capacityBytes = pool.getTotalCapacity();
    }
  }

  /** NMT's totals. */
  static final class Nmt {
    final long reservedBytes;
    final long committedBytes;
    final Long mallocBytes;
    final Long mmapCommittedBytes;

    Nmt(NmtSummary summary) {
      this.reservedBytes = summary.reservedBytes();
      this.committedBytes = summary.committedBytes();
      this.mallocBytes = summary.mallocBytes();
      this.mmapCommittedBytes = summary.mmapCommittedBytes();
    }
  }

  /**
   * Why a source of figures is absent here; a null field is a source present, and is left out of
   * the JSON (the Java side's keys, {@link JsonBinding.Added}).
   */
  static final class Absent {
    @JsonBinding.Added final String nmt;
    @JsonBinding.Added final String memoryPools;

    Absent(String nmt, String memoryPools) {
      this.nmt = nmt;
      this.memoryPools = memoryPools;
    }
  }

  /** The handle counts a breakdown shows: per kind open and leaked, and the caches' capacity. */
  static final class Handles {
    final boolean agentActive;
    final List<HandleKind> kinds;
    final long openCacheCapacityBytes;
    final long zombieCacheCapacityBytes;

    Handles(HandleReport report) {
      this.agentActive = report.agentActive();
      List<HandleKind> kinds = new ArrayList<>();
      for (HandleReport.KindCount kind : report.kinds()) {
        kinds.add(new HandleKind(kind));
      }
      this.kinds = List.copyOf(kinds);
      this.openCacheCapacityBytes = report.openCacheCapacityBytes();
      this.zombieCacheCapacityBytes = report.zombieCacheCapacityBytes();
    }
  }

  /** One kind's open and leaked handles. */
  static final class HandleKind {
    final String kind;
    final long open;
    final long leaked;

    HandleKind(HandleReport.KindCount count) {
      this.kind = count.kind();
      this.open = count.open();
      this.leaked = count.leaked();
    }
  }
}
