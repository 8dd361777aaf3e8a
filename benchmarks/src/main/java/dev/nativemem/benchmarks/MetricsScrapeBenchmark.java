package dev.nativemem.benchmarks;

import dev.nativemem.memory.MemorySnapshot;
import dev.nativemem.micrometer.NativeMemoryMeterBinder;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.util.concurrent.TimeUnit;
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
 * One scrape of every nativemem gauge through Micrometer: {@code allGauges} reads each gauge's
 * value (what any registry's publication does), {@code prometheusScrape} renders the Prometheus
 * text of a registry holding only nativemem's gauges (what {@code /actuator/prometheus} adds). Each
 * scrape starts after the shared reading expired, so every scrape takes a fresh one (goal: 1 ms).
 */
@BenchmarkMode(Mode.SampleTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Warmup(iterations = 3, time = 3)
@Measurement(iterations = 5, time = 5)
@State(Scope.Benchmark)
public abstract class MetricsScrapeBenchmark {
  private SimpleMeterRegistry simple;
  private PrometheusMeterRegistry prometheus;

  @Setup
  public void bind() {
    simple = new SimpleMeterRegistry();
    new NativeMemoryMeterBinder().bindTo(simple);
    prometheus = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    new NativeMemoryMeterBinder().bindTo(prometheus);
    if (simple.getMeters().isEmpty()) {
      throw new IllegalStateException("no gauge bound: nativemem cannot read here");
    }
  }

  /** Given to a benchmark: before each scrape, not measured, the last reading expires. */
  @State(Scope.Thread)
  public static class Expired {
    @Setup(Level.Invocation)
    public void expireReading() throws InterruptedException {
      Thread.sleep(MemorySnapshot.MAX_AGE.toMillis() + 5);
    }
  }

  @Benchmark
  public double allGauges(Expired fresh) {
    return readAll();
  }

  /** The gauges alone: a reading shared with the scrape before (within its max age). */
  @Benchmark
  public double allGaugesSharedReading() {
    return readAll();
  }

  private double readAll() {
    double sum = 0;
    for (Meter meter : simple.getMeters()) {
      for (io.micrometer.core.instrument.Measurement m : meter.measure()) {
        sum += m.getValue();
      }
    }
    return sum;
  }

  @Benchmark
  public String prometheusScrape(Expired fresh) {
    return prometheus.scrape();
  }

  /** NMT off: a reading runs no diagnostic command. */
  @Fork(1)
  public static class NmtOff extends MetricsScrapeBenchmark {}

  /** NMT on: each reading also runs NMT's summary through the DiagnosticCommand MBean. */
  @Fork(value = 1, jvmArgsAppend = "-XX:NativeMemoryTracking=summary")
  public static class NmtOn extends MetricsScrapeBenchmark {}
}
