package dev.nativemem.micrometer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.nativemem.base.NativeMemoryException;
import dev.nativemem.handles.NativeHandles;
import dev.nativemem.handles.TrackedResource;
import dev.nativemem.memory.MemorySnapshot;
import dev.nativemem.metrics.Measurement;
import dev.nativemem.metrics.NativeMemoryMetric;
import dev.nativemem.metrics.NativeMemoryMetrics;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.config.MeterFilter;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;
import java.util.logging.Handler;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

class NativeMemoryMeterBinderTest {

  private static Gauge gauge(SimpleMeterRegistry registry, Measurement m) {
    Gauge g = registry.find(m.metric().metricName()).tags(tagsOf(m)).gauge();
    assertNotNull(g, "gauge for " + m.seriesKey());
    return g;
  }

  private static Tags tagsOf(Measurement m) {
    Tags tags = Tags.empty();
    for (Map.Entry<String, String> t : m.tags().entrySet()) {
      tags = tags.and(t.getKey(), t.getValue());
    }
    return tags;
  }

  private static FunctionCounter counter(SimpleMeterRegistry registry, Measurement m) {
    FunctionCounter c = registry.find(m.metric().metricName()).tags(tagsOf(m)).functionCounter();
    assertNotNull(c, "counter for " + m.seriesKey());
    return c;
  }

  @Test
  void everyMeasurementIsAGaugeOrCounterWithItsUnitAndValue() throws Exception {
    TrackedResource<AutoCloseable> probe = NativeHandles.track(() -> {}, "CounterProbe");
    NativeMemoryMetrics reading = NativeMemoryMetrics.read();
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    new NativeMemoryMeterBinder(() -> reading, Tags.of("app", "test")).bindTo(registry);
    assertEquals(reading.measurements().size(), registry.getMeters().size());
    boolean sawCounter = false;
    for (Measurement m : reading.measurements()) {
      Meter meter;
      double value;
      if (m.metric().type() == NativeMemoryMetric.Type.COUNTER) {
        FunctionCounter c = counter(registry, m);
        sawCounter = true;
        meter = c;
        value = c.count();
      } else {
        Gauge g = gauge(registry, m);
        meter = g;
        value = g.value();
      }
      assertEquals(m.value(), value, m.seriesKey());
      assertEquals(m.metric().baseUnit().orElse(null), meter.getId().getBaseUnit());
      assertEquals("test", meter.getId().getTag("app"));
    }
    assertTrue(sawCounter, "a tracked kind has a leaked count");
    probe.close();
  }

  /**
   * A count that only grows is a counter, so Prometheus names it _total and alerts on increase().
   */
  @Test
  void leakedHandlesAreACounterNotAGauge() throws Exception {
    TrackedResource<AutoCloseable> probe = NativeHandles.track(() -> {}, "CounterProbe");
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    NativeMemoryMetrics reading = NativeMemoryMetrics.read();
    new NativeMemoryMeterBinder(() -> reading, Tags.empty()).bindTo(registry);
    assertNull(registry.find("nativemem.handles.leaked").gauge());
    FunctionCounter leaked =
        registry
            .find("nativemem.handles.leaked")
            .tags("kind", "CounterProbe", "known", NativeMemoryMetric.NO_KNOWN_LEAK)
            .functionCounter();
    assertNotNull(leaked, "nativemem.handles.leaked is registered as a counter");
    assertEquals(0.0, leaked.count());
    assertEquals(
        "nativemem_handles_leaked_total", NativeMemoryMetric.HANDLES_LEAKED.prometheusName());
    probe.close();
  }

  /** The gauges of a scrape read one snapshot: the figures of a scrape agree with each other. */
  @Test
  void aScrapeOfAllGaugesTakesOneReading() throws Exception {
    Map<NativeMemoryMetrics, Boolean> seen = new IdentityHashMap<>();
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    new NativeMemoryMeterBinder(
            () -> {
              NativeMemoryMetrics m = NativeMemoryMetrics.current();
              seen.put(m, true);
              return m;
            },
            Tags.empty())
        .bindTo(registry);
    Thread.sleep(MemorySnapshot.MAX_AGE.toMillis() + 50);
    seen.clear();
    long start = System.nanoTime();
    scrape(registry);
    long elapsed = System.nanoTime() - start;
    Assumptions.assumeTrue(
        elapsed < MemorySnapshot.MAX_AGE.toNanos() / 2, "scrape too slow on a busy machine");
    assertEquals(1, seen.size(), "one reading for " + registry.getMeters().size() + " gauges");
  }

  @Test
  void aKindFirstSeenAfterBindingIsPublishedFromTheNextScrape() throws Exception {
    AtomicReference<NativeMemoryMetrics> reading =
        new AtomicReference<>(NativeMemoryMetrics.read());
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    new NativeMemoryMeterBinder(reading::get, Tags.empty()).bindTo(registry);
    assertNull(registry.find("nativemem.handles.open").tag("kind", "BinderProbe").gauge());

    List<TrackedResource<AutoCloseable>> open = new ArrayList<>();
    for (int i = 0; i < 2; i++) {
      open.add(NativeHandles.track(() -> {}, "BinderProbe"));
    }
    Thread.sleep(MemorySnapshot.MAX_AGE.toMillis() + 50);
    reading.set(NativeMemoryMetrics.read());
    scrape(registry);
    Gauge probe = registry.find("nativemem.handles.open").tag("kind", "BinderProbe").gauge();
    assertNotNull(probe, "registered by the scrape that first saw the kind");
    assertEquals(2.0, probe.value());
    for (TrackedResource<AutoCloseable> r : open) {
      r.close();
    }
  }

  @Test
  void aDeniedOrRefusedNameCostsOnlyThatGauge() {
    NativeMemoryMetrics reading = NativeMemoryMetrics.read();
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    registry.config().meterFilter(MeterFilter.denyNameStartsWith("nativemem.process"));
    registry
        .config()
        .meterFilter(
            new MeterFilter() {
              @Override
              public Meter.Id map(Meter.Id id) {
                if (id.getName().equals("nativemem.unaccounted")) {
                  throw new IllegalArgumentException("name refused by this registry");
                }
                return id;
              }
            });
    List<LogRecord> warnings = capture();
    new NativeMemoryMeterBinder(() -> reading, Tags.empty()).bindTo(registry);
    assertTrue(registry.find("nativemem.process.rss").meters().isEmpty());
    assertTrue(registry.find("nativemem.unaccounted").meters().isEmpty());
    Measurement heap = reading.of(NativeMemoryMetric.JVM_HEAP_COMMITTED).get(0);
    assertEquals(heap.value(), gauge(registry, heap).value());
    assertEquals(1, warnings.size(), "one warning naming the refused gauge");
    assertTrue(warnings.get(0).getMessage().contains("nativemem_unaccounted_bytes"));
  }

  @Test
  void withoutItsNativeLibraryNothingIsPublishedAndOneWarningSaysWhy() {
    SimpleMeterRegistry first = new SimpleMeterRegistry();
    SimpleMeterRegistry second = new SimpleMeterRegistry();
    List<LogRecord> warnings = capture();
    NativeMemoryMeterBinder binder =
        new NativeMemoryMeterBinder(
            () -> {
              throw new NativeMemoryException("cannot load libnativemem.so: planted by the test");
            },
            Tags.empty());
    binder.bindTo(first);
    binder.bindTo(second);
    assertTrue(first.getMeters().isEmpty());
    assertTrue(second.getMeters().isEmpty());
    assertEquals(1, warnings.size());
    assertTrue(warnings.get(0).getMessage().contains("planted by the test"));
    assertFalse(warnings.get(0).getMessage().isEmpty());
  }

  /** Reads every gauge, as a registry's publication does. */
  private static void scrape(SimpleMeterRegistry registry) {
    for (Meter meter : registry.getMeters()) {
      meter.measure().forEach(io.micrometer.core.instrument.Measurement::getValue);
    }
  }

  private static List<LogRecord> capture() {
    List<LogRecord> records = new ArrayList<>();
    Logger logger = Logger.getLogger(NativeMemoryMeterBinder.class.getName());
    logger.addHandler(
        new Handler() {
          @Override
          public void publish(LogRecord record) {
            records.add(record);
          }

          @Override
          public void flush() {}

          @Override
          public void close() {}
        });
    return records;
  }
}
