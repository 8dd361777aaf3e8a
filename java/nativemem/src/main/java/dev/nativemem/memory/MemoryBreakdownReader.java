package dev.nativemem.memory;

import dev.nativemem.handles.HandleReport;
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
    return new MemoryBreakdown(nativeView, readJvm(resident), nmt, handles, view);
  }

  /**
   * The resident view, with the heap's and the code cache's resident bytes ({@code [heap, code
   * cache]}, as {@link JvmRegions#split} gives them) counted by the caller in its own native call.
   */
  static MemoryBreakdown readResident(
      Map<String, Object> nativeView, NmtSummary nmt, HandleReport handles, Long[] resident) {
    return new MemoryBreakdown(
        nativeView, readJvm(resident), nmt, handles, MemoryBreakdown.View.RESIDENT);
  }

  private static JvmMemory readJvm(Long[] resident) {
    MemoryUsage heap = ManagementFactory.getMemoryMXBean().getHeapMemoryUsage();
    List<MemoryBreakdown.Pool> nonHeapPools = new ArrayList<>();
    for (MemoryPoolMXBean pool : Pools.MEMORY) {
      if (pool.getType() == MemoryType.NON_HEAP && pool.isValid()) {
        MemoryUsage usage = pool.getUsage();
        nonHeapPools.add(
            new MemoryBreakdown.Pool(pool.getName(), -1, usage.getUsed(), usage.getCommitted()));
      }
    }
    List<MemoryBreakdown.Pool> bufferPools = new ArrayList<>();
    for (BufferPoolMXBean pool : Pools.BUFFERS) {
      bufferPools.add(
          new MemoryBreakdown.Pool(
              pool.getName(), pool.getCount(), pool.getMemoryUsed(), pool.getTotalCapacity()));
    }
    return new JvmMemory(heap, nonHeapPools, bufferPools, resident[0], resident[1]);
  }
}
