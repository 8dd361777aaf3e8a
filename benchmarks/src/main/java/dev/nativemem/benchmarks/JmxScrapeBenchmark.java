package dev.nativemem.benchmarks;

import dev.nativemem.NativeMemory;
import dev.nativemem.NativeMemoryMXBean;
import dev.nativemem.memory.MemoryBreakdown;
import dev.nativemem.memory.MemorySnapshot;
import java.lang.management.ManagementFactory;
import java.util.Arrays;
import java.util.concurrent.TimeUnit;
import javax.management.AttributeList;
import javax.management.JMException;
import javax.management.MBeanAttributeInfo;
import javax.management.MBeanServer;
import javax.management.ObjectName;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * One JMX scrape of every attribute (what the Prometheus JMX exporter does per MBean), through the
 * platform MBean server: the MXBean as it is, reading one {@link MemorySnapshot}, beside a copy of
 * the MXBean before the snapshot, where each attribute read its own breakdown (and the stats). Each
 * scrape starts after the shared snapshot expired, so every scrape takes a fresh reading.
 */
@BenchmarkMode(Mode.SampleTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Warmup(iterations = 3, time = 3)
@Measurement(iterations = 5, time = 5)
@State(Scope.Benchmark)
public abstract class JmxScrapeBenchmark {
  private MBeanServer server;
  private ObjectName snapshotBean;
  private ObjectName perAttributeBean;
  private String[] attributes;

  @Setup
  public void register() throws JMException {
    server = ManagementFactory.getPlatformMBeanServer();
    snapshotBean = NativeMemory.registerMBean();
    perAttributeBean = new ObjectName("dev.nativemem.benchmarks:type=NativeMemoryPerAttribute");
    server.registerMBean(new PerAttributeReads(), perAttributeBean);
    attributes =
        Arrays.stream(server.getMBeanInfo(snapshotBean).getAttributes())
            .map(MBeanAttributeInfo::getName)
            .toArray(String[]::new);
  }

  /** Not measured: lets the last scrape's snapshot expire. */
  @Setup(Level.Invocation)
  public void expireSnapshot() throws InterruptedException {
    Thread.sleep(MemorySnapshot.MAX_AGE.toMillis() + 5);
  }

  @Benchmark
  public AttributeList oneSnapshot() throws JMException {
    return checked(server.getAttributes(snapshotBean, attributes));
  }

  @Benchmark
  public AttributeList readPerAttribute() throws JMException {
    return checked(server.getAttributes(perAttributeBean, attributes));
  }

  private AttributeList checked(AttributeList values) {
    if (values.size() != attributes.length) {
      throw new IllegalStateException("read " + values.size() + " of " + attributes.length);
    }
    return values;
  }

  /** NMT off: a breakdown runs no diagnostic command. */
  @Fork(1)
  public static class NmtOff extends JmxScrapeBenchmark {}

  /** NMT on: each breakdown also runs NMT's summary through the DiagnosticCommand MBean. */
  @Fork(value = 1, jvmArgsAppend = "-XX:NativeMemoryTracking=summary")
  public static class NmtOn extends JmxScrapeBenchmark {}

  /** The MXBean as it was before {@link MemorySnapshot} (commit 25b0a68^): a reading per getter. */
  public static final class PerAttributeReads implements NativeMemoryMXBean {
    @Override
    public String getAllocatorKind() {
      return NativeMemory.breakdown().allocatorKind();
    }

    @Override
    public long getAllocatedBytes() {
      return NativeMemory.breakdown().allocatorAllocatedBytes();
    }

    @Override
    public long getAllocatorResidentBytes() {
      return NativeMemory.breakdown().allocatorResidentBytes().orElse(-1L);
    }

    @Override
    public long getAllocatorDirtyBytes() {
      return NativeMemory.breakdown().allocatorDirtyBytes().orElse(-1L);
    }

    @Override
    public long getRssBytes() {
      return NativeMemory.processMemory().rssBytes();
    }

    @Override
    public long getUnaccountedBytes() {
      return NativeMemory.breakdown(MemoryBreakdown.View.RESIDENT).unaccountedBytes();
    }

    @Override
    public long getLimitBytes() {
      return NativeMemory.breakdown().limitBytes().orElse(-1L);
    }

    @Override
    public long getHeadroomBytes() {
      return NativeMemory.breakdown().headroomBytes().orElse(-1L);
    }

    @Override
    public java.util.Map<String, Double> getSeries() {
      return java.util.Collections.emptyMap(); // newer than this copy
    }

    @Override
    public java.util.Map<String, Long> getHandlesOpen() {
      return java.util.Collections.emptyMap(); // newer than this copy
    }

    @Override
    public String getBreakdownJson() {
      return NativeMemory.breakdown().toJson();
    }

    @Override
    public String getStatsJson() {
      return NativeMemory.stats().toJson();
    }

    @Override
    public String purge() {
      throw new UnsupportedOperationException("an operation, not an attribute");
    }
  }
}
