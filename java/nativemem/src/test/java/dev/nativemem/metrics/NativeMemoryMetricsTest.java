package dev.nativemem.metrics;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.nativemem.NativeMemory;
import dev.nativemem.NativeMemoryMXBean;
import dev.nativemem.handles.HandleReport;
import dev.nativemem.handles.HandleReports;
import dev.nativemem.handles.NativeHandles;
import dev.nativemem.handles.TrackedResource;
import dev.nativemem.internal.Json;
import dev.nativemem.memory.AllocatorStats;
import dev.nativemem.memory.MemoryBreakdown;
import dev.nativemem.memory.MemorySnapshot;
import java.lang.management.BufferPoolMXBean;
import java.lang.management.ManagementFactory;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.OptionalDouble;
import java.util.stream.Collectors;
import javax.management.JMX;
import javax.management.ObjectName;
import javax.management.openmbean.CompositeData;
import javax.management.openmbean.TabularData;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

class NativeMemoryMetricsTest {

  /** The names shared with the Flink module and the JMX exporter rules (issue 16's table). */
  @Test
  void tableHasTheSharedPrometheusNames() {
    List<String> expected =
        Arrays.asList(
            "nativemem_allocator_allocated_bytes",
            "nativemem_allocator_active_bytes",
            "nativemem_allocator_resident_bytes",
            "nativemem_allocator_mapped_bytes",
            "nativemem_allocator_retained_bytes",
            "nativemem_allocator_dirty_bytes",
            "nativemem_allocator_arenas",
            "nativemem_process_rss_bytes",
            "nativemem_process_rss_anon_bytes",
            "nativemem_process_rss_file_bytes",
            "nativemem_container_limit_bytes",
            "nativemem_container_usage_bytes",
            "nativemem_container_headroom_bytes",
            "nativemem_jvm_heap_committed_bytes",
            "nativemem_jvm_nonheap_committed_bytes",
            "nativemem_jvm_direct_buffers_bytes",
            "nativemem_unaccounted_bytes",
            "nativemem_handles_open",
            "nativemem_handles_leaked_total",
            "nativemem_cache_capacity_bytes",
            "nativemem_profiling_ready",
            "nativemem_profiling_active",
            "nativemem_export_sent_total",
            "nativemem_export_dropped_total");
    List<String> names =
        Arrays.stream(NativeMemoryMetric.values())
            .map(NativeMemoryMetric::prometheusName)
            .collect(Collectors.toList());
    assertEquals(expected, names);
    for (NativeMemoryMetric m : NativeMemoryMetric.values()) {
      assertTrue(m.metricName().matches("nativemem(\\.[a-z]+)+"), m.metricName());
      assertFalse(m.description().isEmpty(), m + " has a description");
    }
  }

  @Test
  void readingAgreesWithTheKernelTheJvmAndTheAllocator() throws Exception {
    ByteBuffer planted = ByteBuffer.allocateDirect(8 << 20);
    Thread.sleep(MemorySnapshot.MAX_AGE.toMillis() + 50); // past the shared snapshot
    NativeMemoryMetrics m = NativeMemoryMetrics.read();
    long vmRss = procStatusBytes("VmRSS");
    double rss = m.value(NativeMemoryMetric.PROCESS_RSS).getAsDouble();
    assertTrue(Math.abs(rss - vmRss) < vmRss / 10.0, rss + " vs VmRSS " + vmRss);
    double anon = m.value(NativeMemoryMetric.PROCESS_RSS_ANON).getAsDouble();
    double file = m.value(NativeMemoryMetric.PROCESS_RSS_FILE).getAsDouble();
    assertTrue(anon > 0 && file > 0 && anon + file <= rss, anon + " + " + file + " vs " + rss);

    long direct =
        ManagementFactory.getPlatformMXBeans(BufferPoolMXBean.class).stream()
            .filter(p -> p.getName().equals("direct"))
            .mapToLong(BufferPoolMXBean::getMemoryUsed)
            .sum();
    assertEquals(direct, m.value(NativeMemoryMetric.JVM_DIRECT_BUFFERS).getAsDouble());
    assertTrue(direct >= planted.capacity(), "planted direct buffer counted: " + direct);

    String kind = NativeMemory.allocator().isJemalloc() ? "jemalloc" : "glibc";
    for (Measurement allocator : m.of(NativeMemoryMetric.ALLOCATOR_ALLOCATED)) {
      assertEquals(Map.of("allocator", kind), allocator.tags());
    }
    AllocatorStats stats = m.snapshot().stats();
    assertEquals(
        (double) stats.allocatedBytes(),
        m.value(NativeMemoryMetric.ALLOCATOR_ALLOCATED).getAsDouble());
    boolean jemalloc = stats.jemalloc().isPresent();
    for (NativeMemoryMetric jemallocOnly :
        Arrays.asList(
            NativeMemoryMetric.ALLOCATOR_ACTIVE,
            NativeMemoryMetric.ALLOCATOR_RESIDENT,
            NativeMemoryMetric.ALLOCATOR_RETAINED,
            NativeMemoryMetric.ALLOCATOR_DIRTY)) {
      assertEquals(jemalloc, m.value(jemallocOnly).isPresent(), jemallocOnly + " under " + kind);
    }
    stats
        .glibc()
        .ifPresent(
            g ->
                assertEquals(
                    (double) g.arenaBytes() + g.mmapBytes(),
                    m.value(NativeMemoryMetric.ALLOCATOR_MAPPED).getAsDouble()));

    MemoryBreakdown b = m.snapshot().breakdown();
    assertEquals(
        b.limitBytes().isPresent(), m.value(NativeMemoryMetric.CONTAINER_LIMIT).isPresent());
    if (b.limitBytes().isPresent()) {
      assertEquals(
          m.value(NativeMemoryMetric.CONTAINER_LIMIT).getAsDouble()
              - m.value(NativeMemoryMetric.CONTAINER_USAGE).getAsDouble(),
          m.value(NativeMemoryMetric.CONTAINER_HEADROOM).getAsDouble());
    } else {
      assertFalse(m.value(NativeMemoryMetric.CONTAINER_HEADROOM).isPresent());
    }
    long nonHeap = ManagementFactory.getMemoryMXBean().getNonHeapMemoryUsage().getCommitted();
    double nonHeapMetric = m.value(NativeMemoryMetric.JVM_NONHEAP_COMMITTED).getAsDouble();
    assertTrue(
        Math.abs(nonHeapMetric - nonHeap) < nonHeap / 10.0, nonHeapMetric + " vs " + nonHeap);
    assertEquals(
        NativeMemory.profiling().isAvailable() ? 1.0 : 0.0,
        m.value(NativeMemoryMetric.PROFILING_READY).getAsDouble());
    assertFalse(NativeHandles.agentActive());
    assertTrue(m.of(NativeMemoryMetric.CACHE_CAPACITY).isEmpty(), "no cache figures without agent");
  }

  @Test
  void trackedHandlesArePublishedPerKind() throws Exception {
    List<TrackedResource<AutoCloseable>> open = new ArrayList<>();
    for (int i = 0; i < 3; i++) {
      open.add(NativeHandles.track(() -> {}, "MetricsProbe"));
    }
    Thread.sleep(MemorySnapshot.MAX_AGE.toMillis() + 50);
    NativeMemoryMetrics m = NativeMemoryMetrics.current();
    assertEquals(3.0, m.value(NativeMemoryMetric.HANDLES_OPEN, "MetricsProbe").getAsDouble());
    assertEquals(
        0.0, m.value(NativeMemoryMetric.HANDLES_LEAKED, "MetricsProbe", "none").getAsDouble());
    assertEquals(OptionalDouble.empty(), m.value(NativeMemoryMetric.HANDLES_OPEN, "NeverSeenKind"));
    for (TrackedResource<AutoCloseable> r : open) {
      r.close();
    }
  }

  /**
   * A reading asks the handle registry once: the handle series are those of the snapshot they are
   * measured from, not of a second report read after it (which counted a handle the snapshot's
   * breakdown did not).
   */
  @Test
  void handleSeriesAreTheSnapshotsOwn() throws Exception {
    TrackedResource<AutoCloseable> before = NativeHandles.track(() -> {}, "OneReadingProbe");
    List<TrackedResource<AutoCloseable>> after = new ArrayList<>();
    try {
      // A snapshot that expires before the metrics read it proves nothing: try again.
      for (int attempt = 0; attempt < 5; attempt++) {
        Thread.sleep(MemorySnapshot.MAX_AGE.toMillis() + 50); // past the shared snapshot
        long start = System.nanoTime();
        MemorySnapshot snapshot = NativeMemory.snapshot();
        after.add(NativeHandles.track(() -> {}, "OneReadingProbe"));
        NativeMemoryMetrics m = NativeMemoryMetrics.current();
        long took = System.nanoTime() - start;
        if (m.snapshot() != snapshot) {
          continue;
        }
        long open = snapshot.breakdown().handles().kind("OneReadingProbe").open();
        assertEquals(after.size(), open, "the snapshot's own count");
        assertEquals(
            (double) open,
            m.value(NativeMemoryMetric.HANDLES_OPEN, "OneReadingProbe").getAsDouble(),
            "the metrics count the snapshot's handles, as its breakdown does ("
                + took / 1_000_000
                + " ms)");
        return;
      }
      Assumptions.assumeTrue(
          false, "every snapshot expired before the metrics read it: a busy machine");
    } finally {
      before.close();
      for (TrackedResource<AutoCloseable> r : after) {
        r.close();
      }
    }
  }

  /** Leaked handles of a catalogued site carry its id; the rest of the kind {@code none}. */
  @Test
  void leakedHandlesCarryTheKnownLeakOfTheirSite() {
    String stack =
        "created at com.example.App.read(App.java:7)\n"
            + "\tat java.base/java.util.zip.Inflater.<init>(Inflater.java:120)\n"
            + "\tat java.base/java.net.URLClassLoader.getResourceAsStream(URLClassLoader.java:290)\n"
            + "\tat app//com.example.App.read(App.java:7)\n";
    String json =
        "{\"kinds\": [{\"kind\": \"Inflater\", \"created\": 9, \"closed\": 0, \"transferred\": 0,"
            + " \"open\": 4, \"pooled\": 0, \"leaked\": 5}], \"sites\": [{\"kind\": \"Inflater\","
            + " \"open\": 0, \"pooled\": 0, \"leaked\": 3,"
            + " \"freed_by_finalizer\": 0, \"last_freed_by_finalizer_epoch_ms\": null, \"stack\": "
            + Json.write(stack)
            + "}], \"zombie_caches\": [], \"oldest_open\": [], \"open_cache_capacity_bytes\": 0,"
            + " \"zombie_cache_capacity_bytes\": 0, \"sites_dropped\": 0, \"sites_kept\": 1,"
            + " \"tracker_memory_bytes\": 0}";
    HandleReport report = HandleReports.fromJson(true, json);
    List<Measurement> leaked = readOnly(NativeMemoryMetric.HANDLES_LEAKED, report);
    assertEquals(
        Arrays.asList(
            "nativemem_handles_leaked_total;kind=Inflater;known=none 2.0",
            "nativemem_handles_leaked_total;kind=Inflater;known=unclosed-getResourceAsStream 3.0"),
        leaked.stream().map(Measurement::toString).collect(Collectors.toList()));
    List<Measurement> caches = readOnly(NativeMemoryMetric.CACHE_CAPACITY, report);
    assertEquals(2, caches.size(), "with the agent: open and zombie capacity");
  }

  /**
   * The MXBean's {@code purge} operation, invoked as a JMX console does: the allocator's remedy
   * (jemalloc's purge, glibc's trim), answered as {@link NativeMemory.RemedyResult}'s JSON.
   */
  @Test
  void mxBeanPurgeRunsTheAllocatorsRemedy() throws Exception {
    ObjectName name = NativeMemory.registerMBean();
    String answer =
        (String) ManagementFactory.getPlatformMBeanServer().invoke(name, "purge", null, null);
    Map<String, Object> json = Json.parseObject(answer);
    boolean jemalloc = NativeMemory.allocator().isJemalloc();
    assertEquals(jemalloc ? "purge" : "trim", json.get("remedy"), answer);
    assertEquals(jemalloc ? "jemalloc" : "glibc", json.get("allocator"), answer);
    assertTrue(((Number) json.get("rss_before_bytes")).longValue() > 0, answer);
    assertTrue(((Number) json.get("rss_after_bytes")).longValue() > 0, answer);
    assertEquals(
        json.keySet(),
        Json.parseObject(jemalloc ? NativeMemory.purge().toJson() : NativeMemory.trim().toJson())
            .keySet(),
        "the operation answers with the keys of NativeMemory's remedies, nulls included");
  }

  @Test
  void mxBeanSeriesAreTheTableFromOneReading() throws Exception {
    ObjectName name = NativeMemory.registerMBean();
    TabularData table =
        (TabularData) ManagementFactory.getPlatformMBeanServer().getAttribute(name, "Series");
    java.util.Set<String> keys = new HashSet<>();
    for (Object row : table.values()) {
      keys.add((String) ((CompositeData) row).get("key"));
    }
    NativeMemoryMetrics m = NativeMemoryMetrics.current();
    assertEquals(
        m.measurements().stream().map(Measurement::seriesKey).collect(Collectors.toSet()), keys);
    assertTrue(keys.contains("nativemem_process_rss_bytes"), keys.toString());
    String allocator = m.snapshot().breakdown().allocatorKind();
    assertTrue(
        keys.contains("nativemem_allocator_allocated_bytes;allocator=" + allocator),
        keys.toString());
    NativeMemoryMXBean bean =
        JMX.newMXBeanProxy(
            ManagementFactory.getPlatformMBeanServer(), name, NativeMemoryMXBean.class);
    assertTrue(bean.getSeries().values().stream().noneMatch(v -> v == -1.0), "no -1 figures");
  }

  private static List<Measurement> readOnly(NativeMemoryMetric metric, HandleReport report) {
    List<Measurement> out = new ArrayList<>();
    metric.read(
        new NativeMemoryMetric.Sources() {
          @Override
          public MemoryBreakdown breakdown() {
            throw new AssertionError("not read by " + metric);
          }

          @Override
          public AllocatorStats stats() {
            throw new AssertionError("not read by " + metric);
          }

          @Override
          public HandleReport handles() {
            return report;
          }

          @Override
          public boolean profilingAvailable() {
            throw new AssertionError("not read by " + metric);
          }

          @Override
          public boolean profilingActive() {
            throw new AssertionError("not read by " + metric);
          }
        },
        new NativeMemoryMetric.Emitter() {
          @Override
          public void value(double value, String... tagValues) {
            out.add(new Measurement(metric, Arrays.asList(tagValues), value));
          }

          @Override
          public void allocator(double value) {
            throw new AssertionError("not read by " + metric);
          }
        });
    return out;
  }

  private static long procStatusBytes(String field) throws Exception {
    for (String line : Files.readAllLines(Paths.get("/proc/self/status"))) {
      if (line.startsWith(field + ":")) {
        return Long.parseLong(line.replaceAll("[^0-9]", "")) * 1024;
      }
    }
    throw new AssertionError(field + " not in /proc/self/status");
  }
}
