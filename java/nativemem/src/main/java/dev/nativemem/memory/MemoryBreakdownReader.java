package dev.nativemem.memory;

import dev.nativemem.handles.HandleReport;
import dev.nativemem.internal.RuntimeModules;
import dev.nativemem.memory.reading.NmtSummary;
import java.lang.management.BufferPoolMXBean;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryPoolMXBean;
import java.lang.management.MemoryType;
import java.lang.management.MemoryUsage;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/** Reads the JVM's MXBeans and resident ranges, and builds a {@link MemoryBreakdown} from them. */
final class MemoryBreakdownReader {
  /**
   * The JVM's memory pools and buffer pools: fixed for its life (a pool that stops being used turns
   * invalid, it is not replaced), so looked up once rather than on every reading.
   */
  private static final class Pools {
    static final List<MemoryPoolMXBean> MEMORY = ManagementFactory.getMemoryPoolMXBeans();
    static final List<BufferPoolMXBean> BUFFERS =
        ManagementFactory.getPlatformMXBeans(BufferPoolMXBean.class);
  }

  private MemoryBreakdownReader() {}

  /**
   * A breakdown of the native library's view ({@code nativeView}), NMT's summary ({@code nmt}, null
   * when NMT is off), the handle report, and the JVM's figures read now.
   */
  static MemoryBreakdown read(
      Map<String, Object> nativeView,
      NmtSummary nmt,
      HandleReport handles,
      MemoryBreakdown.View view) {
    Long[] resident =
        view == MemoryBreakdown.View.RESIDENT
            ? JvmRegions.heapAndCodeCacheResidentBytes()
            : new Long[2];
    return breakdown(nativeView, nmt, handles, view, resident);
  }

  /**
   * The resident view, with the heap's and the code cache's resident bytes ({@code [heap, code
   * cache]}, as {@link JvmRegions#split} gives them) counted by the caller in its own native call.
   */
  static MemoryBreakdown readResident(
      Map<String, Object> nativeView, NmtSummary nmt, HandleReport handles, Long[] resident) {
    return breakdown(nativeView, nmt, handles, MemoryBreakdown.View.RESIDENT, resident);
  }

  private static MemoryBreakdown breakdown(
      Map<String, Object> nativeView,
      NmtSummary nmt,
      HandleReport handles,
      MemoryBreakdown.View view,
      Long[] resident) {
    boolean residentView = view == MemoryBreakdown.View.RESIDENT;
    BreakdownParts.Jvm jvm =
        readJvm(
            nmt,
            residentView ? BreakdownParts.Jvm.hex(JvmRegions.heapRanges()) : null,
            residentView ? BreakdownParts.Jvm.hex(JvmRegions.codeCacheRanges()) : null);
    return new MemoryBreakdown(nativeView, jvm, resident[0], resident[1], nmt, handles, view);
  }

  /** Why the JVM's pools cannot be read here, or null: the runtime's modules are fixed. */
  static final String POOLS_ABSENCE =
      RuntimeModules.absence(
          "java.management",
          "memory and buffer pools (the heap's figures come from java.lang.Runtime)");

  private static BreakdownParts.Jvm readJvm(
      NmtSummary nmt, List<List<String>> heapRanges, List<List<String>> codeCacheRanges) {
    BreakdownParts.Nmt totals = nmt == null ? null : new BreakdownParts.Nmt(nmt);
    BreakdownParts.Absent absent =
        new BreakdownParts.Absent(nmt == null ? NmtSummary.absence() : null, POOLS_ABSENCE);
    if (POOLS_ABSENCE != null) {
      Runtime runtime = Runtime.getRuntime();
      long max = runtime.maxMemory();
      return new BreakdownParts.Jvm(
          runtime.totalMemory() - runtime.freeMemory(),
          runtime.totalMemory(),
          max == Long.MAX_VALUE ? -1 : max,
          heapRanges,
          codeCacheRanges,
          List.of(),
          List.of(),
          totals,
          absent);
    }
    return MxBeans.read(heapRanges, codeCacheRanges, totals, absent);
  }

  /** The MXBeans' figures: a class of its own, loaded only where java.management is. */
  private static final class MxBeans {
    static BreakdownParts.Jvm read(
        List<List<String>> heapRanges,
        List<List<String>> codeCacheRanges,
        BreakdownParts.Nmt nmt,
        BreakdownParts.Absent absent) {
      MemoryUsage heap = ManagementFactory.getMemoryMXBean().getHeapMemoryUsage();
      List<BreakdownParts.MemoryPool> nonHeapPools = new ArrayList<>();
      for (MemoryPoolMXBean pool : Pools.MEMORY) {
        if (pool.getType() == MemoryType.NON_HEAP && pool.isValid()) {
          nonHeapPools.add(new BreakdownParts.MemoryPool(pool));
        }
      }
      List<BreakdownParts.BufferPool> bufferPools = new ArrayList<>();
      for (BufferPoolMXBean pool : Pools.BUFFERS) {
        bufferPools.add(new BreakdownParts.BufferPool(pool));
      }
      return new BreakdownParts.Jvm(
          heap.getUsed(),
          heap.getCommitted(),
          heap.getMax(),
          heapRanges,
          codeCacheRanges,
          nonHeapPools,
          bufferPools,
          nmt,
          absent);
    }
  }
}
