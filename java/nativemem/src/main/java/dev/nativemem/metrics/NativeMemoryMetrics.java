package dev.nativemem.metrics;

import dev.nativemem.handles.HandleReport;
import dev.nativemem.memory.AllocatorStats;
import dev.nativemem.memory.MemoryBreakdown;
import dev.nativemem.memory.MemoryReader;
import dev.nativemem.memory.MemorySnapshot;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.OptionalDouble;

/**
 * Every {@link NativeMemoryMetric} measured from one reading: {@link MemoryReader#snapshot()} (the
 * breakdown with the handle report, and the allocator's statistics) plus whether heap profiling
 * runs. Immutable. Metrics registries read {@link #current()} from each gauge, so a scrape of all
 * gauges costs one reading and its figures agree with each other.
 *
 * <pre>{@code
 * NativeMemoryMetrics m = NativeMemoryMetrics.read();
 * m.value(NativeMemoryMetric.PROCESS_RSS).ifPresent(rss -> ...);
 * m.value(NativeMemoryMetric.HANDLES_OPEN, "Inflater");
 * }</pre>
 */
public final class NativeMemoryMetrics {
  private static final Object LOCK = new Object();
  private static NativeMemoryMetrics latest;

  private final MemorySnapshot snapshot;
  private final List<Measurement> measurements;
  private final Map<String, Measurement> bySeries;

  private NativeMemoryMetrics(MemorySnapshot snapshot, ProfilingState profiling) {
    this.snapshot = snapshot;
    Sources sources = new Sources(snapshot, profiling);
    List<Measurement> all = new ArrayList<>();
    for (NativeMemoryMetric metric : NativeMemoryMetric.values()) {
      metric.read(sources, new Collector(metric, sources, all));
    }
    Map<String, Measurement> bySeries = new LinkedHashMap<>();
    for (Measurement m : all) {
      bySeries.put(m.seriesKey(), m);
    }
    this.measurements = Collections.unmodifiableList(all);
    this.bySeries = Collections.unmodifiableMap(bySeries);
  }

  /**
   * Measures {@link MemoryReader#snapshot()} (shared for {@link MemorySnapshot#MAX_AGE}: wait that
   * long for figures taken after a change) and the profiling status now.
   *
   * @throws dev.nativemem.base.NativeMemoryException if the native library cannot be loaded
   */
  public static NativeMemoryMetrics read() {
    MemorySnapshot snapshot = MemoryReader.snapshot();
    return new NativeMemoryMetrics(snapshot, ProfilingState.read());
  }

  /**
   * The reading of the shared {@link MemoryReader#snapshot()}: what each gauge of a scrape calls,
   * so the scrape reads once. It is as old as that snapshot (at most {@link
   * MemorySnapshot#MAX_AGE}).
   */
  public static NativeMemoryMetrics current() {
    MemorySnapshot snapshot = MemoryReader.snapshot();
    synchronized (LOCK) {
      if (latest == null || latest.snapshot != snapshot) {
        latest = new NativeMemoryMetrics(snapshot, ProfilingState.read());
      }
      return latest;
    }
  }

  /** When the underlying snapshot was taken. */
  public Instant takenAt() {
    return snapshot.takenAt();
  }

  /** The snapshot read, for figures beyond the table. */
  public MemorySnapshot snapshot() {
    return snapshot;
  }

  /** Every measurement, in table order; absent figures have none. */
  public List<Measurement> measurements() {
    return measurements;
  }

  /** The measurements of one metric (one per tag combination). */
  public List<Measurement> of(NativeMemoryMetric metric) {
    List<Measurement> out = new ArrayList<>();
    for (Measurement m : measurements) {
      if (m.metric() == metric) {
        out.add(m);
      }
    }
    return out;
  }

  /**
   * The value of {@code metric} with these tag values (in the order of {@link
   * NativeMemoryMetric#tagKeys()}; the allocator tag may be left out); empty when absent.
   */
  public OptionalDouble value(NativeMemoryMetric metric, String... tagValues) {
    if (metric.tagKeys().equals(Collections.singletonList("allocator")) && tagValues.length == 0) {
      tagValues = new String[] {allocatorKind(snapshot.stats())};
    }
    return value(new Measurement(metric, Arrays.asList(tagValues), 0).seriesKey());
  }

  /** The value of the series with this {@link Measurement#seriesKey()}; empty when absent. */
  public OptionalDouble value(String seriesKey) {
    Measurement m = bySeries.get(seriesKey);
    return m == null ? OptionalDouble.empty() : OptionalDouble.of(m.value());
  }

  /** The {@code allocator} tag: {@code jemalloc} or {@code glibc}. */
  static String allocatorKind(AllocatorStats stats) {
    return stats.kind().name().toLowerCase(Locale.ROOT);
  }

  @Override
  public String toString() {
    StringBuilder out = new StringBuilder("nativemem metrics at " + takenAt() + "\n");
    for (Measurement m : measurements) {
      out.append("  ").append(m).append('\n');
    }
    return out.toString();
  }

  private static final class Sources implements NativeMemoryMetric.Sources {
    private final MemorySnapshot snapshot;
    private final ProfilingState profiling;

    Sources(MemorySnapshot snapshot, ProfilingState profiling) {
      this.snapshot = snapshot;
      this.profiling = profiling;
    }

    @Override
    public MemoryBreakdown breakdown() {
      return snapshot.breakdown();
    }

    @Override
    public AllocatorStats stats() {
      return snapshot.stats();
    }

    /**
     * The snapshot's full handle report (the known-leak series need its sites): the registry is
     * asked once per reading, and the handle series agree with the breakdown's.
     */
    @Override
    public HandleReport handles() {
      return snapshot.breakdown().handles();
    }

    @Override
    public boolean profilingAvailable() {
      return profiling.available;
    }

    @Override
    public boolean profilingActive() {
      return profiling.active;
    }
  }

  private static final class Collector implements NativeMemoryMetric.Emitter {
    private final NativeMemoryMetric metric;
    private final Sources sources;
    private final List<Measurement> into;

    Collector(NativeMemoryMetric metric, Sources sources, List<Measurement> into) {
      this.metric = metric;
      this.sources = sources;
      this.into = into;
    }

    @Override
    public void value(double value, String... tagValues) {
      into.add(new Measurement(metric, Arrays.asList(tagValues), value));
    }

    @Override
    public void allocator(double value) {
      value(value, allocatorKind(sources.stats()));
    }
  }
}
