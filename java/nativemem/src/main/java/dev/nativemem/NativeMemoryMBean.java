package dev.nativemem;

import dev.nativemem.memory.Remedies;
import dev.nativemem.metrics.Measurement;
import dev.nativemem.metrics.NativeMemoryMetric;
import dev.nativemem.metrics.NativeMemoryMetrics;
import java.lang.management.ManagementFactory;
import java.util.LinkedHashMap;
import java.util.Map;
import javax.management.InstanceAlreadyExistsException;
import javax.management.JMException;
import javax.management.MBeanServer;
import javax.management.ObjectName;

/** The {@link NativeMemoryMXBean}: every attribute read from {@link NativeMemory#snapshot()}. */
final class NativeMemoryMBean implements NativeMemoryMXBean {
  static final String NAME = OBJECT_NAME;

  /**
   * Registers once per MBean server; later calls return the same name. A copy loaded by another
   * class loader (a restarted job) may already be registered: that one keeps serving.
   */
  static synchronized ObjectName register() {
    ObjectName name;
    try {
      name = new ObjectName(NAME);
    } catch (JMException e) {
      throw new IllegalStateException(e);
    }
    MBeanServer server = ManagementFactory.getPlatformMBeanServer();
    try {
      if (!server.isRegistered(name)) {
        server.registerMBean(new NativeMemoryMBean(), name);
      }
    } catch (InstanceAlreadyExistsException e) {
      // registered between the check and the call: fine
    } catch (JMException e) {
      throw new NativeMemoryException(
          "cannot register " + NAME + " with the platform MBean server: " + e.getMessage(), e);
    }
    return name;
  }

  @Override
  public String getAllocatorKind() {
    return NativeMemory.snapshot().breakdown().allocatorKind();
  }

  @Override
  public long getAllocatedBytes() {
    return NativeMemory.snapshot().breakdown().allocatorAllocatedBytes();
  }

  @Override
  public long getAllocatorResidentBytes() {
    return NativeMemory.snapshot().breakdown().allocatorResidentBytes().orElse(-1L);
  }

  @Override
  public long getAllocatorDirtyBytes() {
    return NativeMemory.snapshot().breakdown().allocatorDirtyBytes().orElse(-1L);
  }

  @Override
  public long getRssBytes() {
    return NativeMemory.snapshot().breakdown().rssBytes();
  }

  @Override
  public long getUnaccountedBytes() {
    return NativeMemory.snapshot().breakdown().unaccountedBytes();
  }

  @Override
  public long getLimitBytes() {
    return NativeMemory.snapshot().breakdown().limitBytes().orElse(-1L);
  }

  @Override
  public long getHeadroomBytes() {
    return NativeMemory.snapshot().breakdown().headroomBytes().orElse(-1L);
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
    return NativeMemory.snapshot().breakdown().toJson();
  }

  @Override
  public String getStatsJson() {
    return NativeMemory.snapshot().stats().toJson();
  }

  @Override
  public String purge() {
    Remedies remedies = NativeMemory.remedies();
    return (NativeMemory.allocator().isJemalloc() ? remedies.purge() : remedies.trim()).toJson();
  }
}
