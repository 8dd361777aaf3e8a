package dev.nativemem;

import dev.nativemem.internal.Jmx;
import dev.nativemem.internal.NativeBridge;
import dev.nativemem.memory.MemoryReader;
import dev.nativemem.metrics.Measurement;
import dev.nativemem.metrics.NativeMemoryMetric;
import dev.nativemem.metrics.NativeMemoryMetrics;
import java.util.LinkedHashMap;
import java.util.Map;
import javax.management.ObjectName;

/**
 * The {@link NativeMemoryMXBean}: every attribute read from one shared snapshot ({@link
 * MemoryReader#snapshot()}).
 */
final class NativeMemoryBean implements NativeMemoryMXBean {
  private static ObjectName registered;

  /**
   * Registers once per copy of these classes; later calls return the same name. Where a copy of
   * another class loader (a restarted job) registered first, this one replaces it ({@link Jmx}).
   */
  static synchronized ObjectName register() {
    if (registered == null) {
      registered = Jmx.register(OBJECT_NAME, new NativeMemoryBean());
    }
    return registered;
  }

  @Override
  public String getAllocatorKind() {
    return MemoryReader.snapshot().breakdown().allocatorKind();
  }

  @Override
  public long getAllocatedBytes() {
    return MemoryReader.snapshot().breakdown().allocatorAllocatedBytes();
  }

  @Override
  public long getAllocatorResidentBytes() {
    return MemoryReader.snapshot().breakdown().allocatorResidentBytes().orElse(-1L);
  }

  @Override
  public long getAllocatorDirtyBytes() {
    return MemoryReader.snapshot().breakdown().allocatorDirtyBytes().orElse(-1L);
  }

  @Override
  public long getRssBytes() {
    return MemoryReader.snapshot().breakdown().rssBytes();
  }

  @Override
  public long getUnaccountedBytes() {
    return MemoryReader.snapshot().breakdown().unaccountedBytes();
  }

  @Override
  public long getLimitBytes() {
    return MemoryReader.snapshot().breakdown().limitBytes().orElse(-1L);
  }

  @Override
  public long getHeadroomBytes() {
    return MemoryReader.snapshot().breakdown().headroomBytes().orElse(-1L);
  }

  @Override
  public Map<String, Double> getSeries() {
    Map<String, Double> series = new LinkedHashMap<>();
    for (Measurement m : NativeMemoryMetrics.current().measurements()) {
      series.put(m.seriesKey(), m.value());
    }
    return series;
  }

  @Override
  public Map<String, Long> getHandlesOpen() {
    Map<String, Long> open = new LinkedHashMap<>();
    for (Measurement m : NativeMemoryMetrics.current().of(NativeMemoryMetric.HANDLES_OPEN)) {
      open.put(m.tags().get("kind"), (long) m.value());
    }
    return open;
  }

  @Override
  public String getBreakdownJson() {
    return MemoryReader.snapshot().breakdown().toJson();
  }

  @Override
  public String getStatsJson() {
    return MemoryReader.snapshot().stats().toJson();
  }

  @Override
  public String purge() {
    // The native library's answer, which NativeMemory.RemedyResult.toJson() gives back as it is:
    // this bean lies below the front door and does not name it.
    return NativeBridge.call(MemoryReader.allocator().isJemalloc() ? "purge" : "trim");
  }
}
