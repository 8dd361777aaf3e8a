package dev.nativemem.benchmarks;

import java.util.zip.Inflater;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.rocksdb.ColumnFamilyOptions;
import org.rocksdb.RocksDB;

/** Create and close one handle; run by {@link HandleTrackingRun} with and without the agent. */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(java.util.concurrent.TimeUnit.NANOSECONDS)
public class HandleTrackingBenchmark {
  @Setup
  public void loadRocksDb() {
    RocksDB.loadLibrary();
  }

  @Benchmark
  public long columnFamilyOptions() {
    try (ColumnFamilyOptions options = new ColumnFamilyOptions()) {
      return options.writeBufferSize();
    }
  }

  @Benchmark
  public int inflater() {
    Inflater inflater = new Inflater();
    try {
      return inflater.getRemaining();
    } finally {
      inflater.end();
    }
  }
}
