package dev.nativemem.benchmarks;

import dev.nativemem.NativeMemory;
import dev.nativemem.memory.AllocatorStats;
import dev.nativemem.memory.MemoryBreakdown;
import dev.nativemem.memory.reading.NmtSummary;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * {@code stats()} and {@code breakdown()} with NMT off and on, and NMT's own summary through the
 * DiagnosticCommand MBean in the NMT-on JVM, so the three compare in one run. Run under the
 * allocator you care about: LD_PRELOAD is inherited by the forked JVMs.
 */
@BenchmarkMode(Mode.SampleTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@State(Scope.Benchmark)
public abstract class MemoryViewsBenchmark {

  @Setup
  public void load() {
    NativeMemory.stats();
  }

  @Benchmark
  public AllocatorStats stats() {
    return NativeMemory.stats();
  }

  /** The resident view: the heap and code cache by their resident pages. */
  @Benchmark
  public MemoryBreakdown breakdown() {
    return NativeMemory.breakdown();
  }

  /** The committed view: no residency pass. */
  @Benchmark
  public MemoryBreakdown breakdownCommitted() {
    return NativeMemory.breakdown(MemoryBreakdown.View.COMMITTED);
  }

  /** NMT off: the breakdown attributes pools, with no diagnostic command. */
  @Fork(1)
  public static class NmtOff extends MemoryViewsBenchmark {}

  /** NMT on: the breakdown includes NMT's summary, measured alone as well. */
  @Fork(value = 1, jvmArgsAppend = "-XX:NativeMemoryTracking=summary")
  public static class NmtOn extends MemoryViewsBenchmark {
    @Benchmark
    public String nmtSummary() {
      return NmtSummary.run();
    }
  }
}
