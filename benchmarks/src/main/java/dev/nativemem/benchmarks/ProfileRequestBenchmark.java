package dev.nativemem.benchmarks;

import dev.nativemem.profile.HeapProfile;
import dev.nativemem.profile.ProfileReport;
import dev.nativemem.profile.ProfileRequest;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import java.util.stream.Stream;
import org.openjdk.jmh.annotations.AuxCounters;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * The top sites, a flame graph and a pprof file from one dump: three calls, each of which parses
 * and symbolizes the dump again, against one {@link ProfileRequest} that does it once. Needs a
 * large real dump: {@code bench/profile-request.sh} makes one (about 100k stacks) and runs this.
 */
@BenchmarkMode(Mode.SingleShotTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Warmup(iterations = 2)
@Measurement(iterations = 7)
@Fork(1)
@State(Scope.Benchmark)
public class ProfileRequestBenchmark {
  /** The heap_v2 dump to analyse. */
  @Param("")
  public String dump;

  private HeapProfile profile;
  private Path out;

  @Setup(Level.Trial)
  public void open() throws IOException {
    if (dump.isEmpty()) {
      throw new IllegalArgumentException("pass -p dump=<heap_v2 dump>: bench/profile-request.sh");
    }
    profile = HeapProfile.open(Paths.get(dump));
    out = Files.createTempDirectory("nativemem-bench");
  }

  /** Outputs must be new files: each invocation writes into an emptied directory. */
  @Setup(Level.Invocation)
  public void empty() throws IOException {
    try (Stream<Path> files = Files.list(out)) {
      for (Path file : (Iterable<Path>) files::iterator) {
        Files.delete(file);
      }
    }
  }

  @TearDown(Level.Trial)
  public void remove() throws IOException {
    empty();
    Files.delete(out);
  }

  /**
   * CPU milliseconds of the benchmark thread, which runs the native analysis too: steadier than
   * wall time on a loaded machine.
   */
  @State(Scope.Thread)
  @AuxCounters(AuxCounters.Type.EVENTS)
  public static class Cpu {
    public double cpuMs;

    <T> T measure(Supplier<T> work) {
      long start = THREADS.getCurrentThreadCpuTime();
      T result = work.get();
      cpuMs += (THREADS.getCurrentThreadCpuTime() - start) / 1e6;
      return result;
    }
  }

  private static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();

  /** {@code analyze()} alone: one analysis and the top sites, what each extra output adds to. */
  @Benchmark
  public ProfileReport analyzeOnly(Cpu cpu) {
    return cpu.measure(profile::analyze);
  }

  /** {@code analyze()}, {@code writeFlameGraph()}, {@code writePprof()}: three analyses. */
  @Benchmark
  public ProfileReport threeCalls(Cpu cpu) {
    return cpu.measure(
        () -> {
          ProfileReport report = profile.analyze();
          profile.writeFlameGraph(out.resolve("a.svg"));
          profile.writePprof(out.resolve("a.pb.gz"));
          return report;
        });
  }

  /** The same three outputs from one request: one analysis. */
  @Benchmark
  public ProfileReport oneRequest(Cpu cpu) {
    return cpu.measure(
        () ->
            profile
                .request()
                .report()
                .write(ProfileRequest.Format.SVG, out.resolve("a.svg"))
                .write(ProfileRequest.Format.PPROF, out.resolve("a.pb.gz"))
                .run()
                .report());
  }
}
