package dev.nativemem.micrometer;

import dev.nativemem.metrics.Measurement;
import dev.nativemem.metrics.NativeMemoryMetric;
import dev.nativemem.metrics.NativeMemoryMetrics;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tag;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.binder.MeterBinder;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Supplier;

/**
 * Publishes nativemem's metric table ({@link NativeMemoryMetric}) as Micrometer gauges, and each
 * counter of the table ({@link NativeMemoryMetric.Type#COUNTER}) as a {@link FunctionCounter}.
 *
 * <p>Every gauge reads {@link NativeMemoryMetrics#current()}, so the gauges of one scrape share one
 * reading (one native snapshot) and agree with each other. Series with tags that appear later (a
 * handle kind first created after binding, a leak matching a catalogue entry) are registered when a
 * reading first has them and are published from the next scrape on. A figure absent from a reading
 * (no container limit, glibc for jemalloc-only figures) is never registered, or reads NaN if it
 * disappears later.
 *
 * <p>If nativemem cannot read (its native library does not load on this platform), binding logs one
 * warning and registers nothing: the application runs on without these gauges.
 *
 * <pre>{@code
 * new NativeMemoryMeterBinder().bindTo(registry);
 * }</pre>
 */
public final class NativeMemoryMeterBinder implements MeterBinder {
  private static final System.Logger LOG =
      System.getLogger(NativeMemoryMeterBinder.class.getName());

  private final Supplier<NativeMemoryMetrics> readings;
  private final Iterable<Tag> extraTags;
  private final AtomicBoolean warned = new AtomicBoolean();

  /** Gauges reading {@link NativeMemoryMetrics#current()}. */
  public NativeMemoryMeterBinder() {
    this(Tags.empty());
  }

  /** Gauges carrying {@code extraTags} besides the table's own. */
  public NativeMemoryMeterBinder(Iterable<Tag> extraTags) {
    this(NativeMemoryMetrics::current, extraTags);
  }

  NativeMemoryMeterBinder(Supplier<NativeMemoryMetrics> readings, Iterable<Tag> extraTags) {
    this.readings = Objects.requireNonNull(readings, "readings");
    this.extraTags = Objects.requireNonNull(extraTags, "extraTags");
  }

  @Override
  public void bindTo(MeterRegistry registry) {
    Objects.requireNonNull(registry, "registry");
    NativeMemoryMetrics first = read();
    if (first != null) {
      new Binding(registry).registerNew(first);
    }
  }

  /** The current reading, or null (one warning) when nativemem cannot read. */
  private NativeMemoryMetrics read() {
    try {
      return readings.get();
    } catch (RuntimeException | LinkageError e) {
      warnOnce("nativemem gauges not published: " + e);
      return null;
    }
  }

  /** One line, without the stack: the message says what failed and what to do. */
  private void warnOnce(String message) {
    if (warned.compareAndSet(false, true)) {
      LOG.log(System.Logger.Level.WARNING, message);
    }
  }

  /** The gauges registered with one registry. */
  private final class Binding {
    private final MeterRegistry registry;
    private final Set<String> registered = ConcurrentHashMap.newKeySet();

    Binding(MeterRegistry registry) {
      this.registry = registry;
    }

    void registerNew(NativeMemoryMetrics reading) {
      for (Measurement m : reading.measurements()) {
        if (registered.add(m.seriesKey())) {
          register(m);
        }
      }
    }

    private void register(Measurement m) {
      NativeMemoryMetric metric = m.metric();
      String key = m.seriesKey();
      Tags tags = Tags.of(extraTags);
      for (Map.Entry<String, String> tag : m.tags().entrySet()) {
        tags = tags.and(tag.getKey(), tag.getValue());
      }
      try {
        if (metric.type() == NativeMemoryMetric.Type.COUNTER) {
          // Prometheus shows it with _total; a series gone from a reading counts 0, never NaN. The
          // counter holds this binding weakly: the gauges above hold it strongly.
          FunctionCounter.builder(metric.metricName(), this, binding -> binding.count(key))
              .description(metric.description())
              .baseUnit(metric.baseUnit().orElse(null))
              .tags(tags)
              .register(registry);
        } else {
          Gauge.builder(metric.metricName(), this, binding -> binding.value(key))
              .description(metric.description())
              .baseUnit(metric.baseUnit().orElse(null))
              .tags(tags)
              .strongReference(true)
              .register(registry);
        }
      } catch (RuntimeException e) {
        // A registry or filter that refuses a name must not cost the application or the others.
        warnOnce("nativemem gauge " + key + " not registered: " + e);
      }
    }

    private double count(String key) {
      double value = value(key);
      return Double.isNaN(value) ? 0 : value;
    }

    private double value(String key) {
      NativeMemoryMetrics now = read();
      if (now == null) {
        return Double.NaN;
      }
      registerNew(now);
      return now.value(key).orElse(Double.NaN);
    }
  }
}
