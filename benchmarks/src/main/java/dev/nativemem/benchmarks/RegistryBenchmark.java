package dev.nativemem.benchmarks;

import dev.nativemem.internal.NativeBridge;
import java.util.Map;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;

/** The Rust registry alone: one create and one end through JNI, as every tracked handle pays. */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(java.util.concurrent.TimeUnit.NANOSECONDS)
public class RegistryBenchmark {
  private int kind;
  private int site;
  private int thread;
  private long address;

  @Setup
  public void intern() {
    kind = (int) NativeBridge.callForNumber("handle_kind", Map.of("name", "BenchmarkHandle"));
    site = (int) NativeBridge.callForNumber("handle_site", Map.of("stack", "(benchmark)"));
    thread = (int) NativeBridge.callForNumber("handle_thread", Map.of("name", "benchmark"));
  }

  @Benchmark
  public boolean createAndEnd() {
    long id = NativeBridge.handlesCreated(kind, address++, site, thread);
    return NativeBridge.handlesEnded(id, 0);
  }
}
