package dev.nativemem.apps.flink;

import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.MemorySize;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.KeyedProcessFunction;
import org.apache.flink.util.Collector;

/**
 * A keyed job on the embedded RocksDB state backend, in a MiniCluster (or the session cluster it is
 * submitted to), that fails and is restarted {@code restarts} times: each attempt builds a new
 * keyed backend. Manual compaction and a ticker metric are on, as in FLINK-39753 and FLINK-39923.
 * Prints what it configured and did; Flink's log (stderr) says which backends it built and which
 * compactions it ran.
 *
 * <p>Arguments: {@code restarts [records keys payloadBytes]}. With a payload each key also keeps
 * that many bytes, read back and rewritten at every record: state that fills the backend's block
 * cache, as a real job's does; the memory and file sizes of RocksDB are then the cluster's (its
 * managed memory), not this job's small ones.
 */
public final class RestartingKeyedJob {
  static final long RECORDS = 120_000;
  static final long KEYS = 60_000;
  static final String MANAGED_PER_SLOT = "32mb";
  static final double WRITE_BUFFER_RATIO = 0.5;

  /** Attempts that opened the keyed function: one per keyed backend. */
  static final AtomicInteger ATTEMPTS = new AtomicInteger();

  private RestartingKeyedJob() {}

  public static void main(String[] args) throws Exception {
    int restarts = Integer.parseInt(args[0]);
    long records = args.length > 1 ? Long.parseLong(args[1]) : RECORDS;
    long keys = args.length > 2 ? Long.parseLong(args[2]) : KEYS;
    int payload = args.length > 3 ? Integer.parseInt(args[3]) : 0;
    StreamExecutionEnvironment env =
        StreamExecutionEnvironment.getExecutionEnvironment(
            Configuration.fromMap(settings(restarts, payload == 0)));
    env.setParallelism(1);
    env.fromSequence(0, records - 1)
        .keyBy(v -> v % keys)
        .process(new FailingCounter(restarts, records, payload))
        .name("failing-counter");
    env.execute("restarting keyed job");
    System.out.println("attempts " + ATTEMPTS.get());
    System.out.println("cache_capacity_bytes " + cacheCapacity());
    // Leaks are found when the garbage collector has seen them (and, with frocksdbjni 6.20, after
    // their finalizers ran).
    for (int i = 0; i < 5; i++) {
      System.gc();
      System.runFinalization();
      Thread.sleep(100);
    }
  }

  private static Map<String, String> settings(int restarts, boolean sized) {
    Map<String, String> conf = new HashMap<>();
    conf.put("state.backend.type", "rocksdb");
    if (sized) {
      conf.put("state.backend.rocksdb.memory.fixed-per-slot", MANAGED_PER_SLOT);
      conf.put("state.backend.rocksdb.memory.write-buffer-ratio", "" + WRITE_BUFFER_RATIO);
      // Small memtables and SST files: many small files on level 1, which manual compaction
      // merges.
      conf.put("state.backend.rocksdb.writebuffer.size", "64kb");
      conf.put("state.backend.rocksdb.compaction.level.target-file-size-base", "16kb");
    }
    conf.put("state.backend.rocksdb.manual-compaction.min-interval", "50 ms");
    // A ticker metric: the backend turns RocksDB statistics on for it.
    conf.put("state.backend.rocksdb.metrics.block-cache-hit", "true");
    conf.put("restart-strategy.type", "fixed-delay");
    conf.put("restart-strategy.fixed-delay.attempts", "" + restarts);
    conf.put("restart-strategy.fixed-delay.delay", "10 ms");
    return conf;
  }

  /**
   * The block cache capacity Flink gives the configured managed memory per slot, by Flink's own
   * rule (RocksDB's memory controller; its package moved in Flink 2.0).
   */
  static long cacheCapacity() throws ReflectiveOperationException {
    long total = MemorySize.parse(MANAGED_PER_SLOT).getBytes();
    for (String pkg :
        new String[] {
          "org.apache.flink.state.rocksdb", "org.apache.flink.contrib.streaming.state"
        }) {
      try {
        Class<?> utils = Class.forName(pkg + ".RocksDBMemoryControllerUtils");
        return (long)
            utils
                .getMethod("calculateActualCacheCapacity", long.class, double.class)
                .invoke(null, total, WRITE_BUFFER_RATIO);
      } catch (ClassNotFoundException e) {
        // the other package
      }
    }
    throw new ClassNotFoundException("RocksDBMemoryControllerUtils, in either of Flink's packages");
  }

  /**
   * Counts per key (and keeps a payload per key, if any); fails the first {@code restarts} attempts
   * halfway, after compactions ran.
   */
  static final class FailingCounter extends KeyedProcessFunction<Long, Long, Long> {
    private final int restarts;
    private final long records;
    private final int payloadBytes;
    private transient ValueState<Long> count;
    private transient ValueState<byte[]> payload;
    private transient int attempt;
    private transient long seen;

    FailingCounter(int restarts, long records, int payloadBytes) {
      this.restarts = restarts;
      this.records = records;
      this.payloadBytes = payloadBytes;
    }

    @Override
    public void open(OpenContext context) {
      attempt = ATTEMPTS.incrementAndGet();
      count = getRuntimeContext().getState(new ValueStateDescriptor<>("count", Long.class));
      if (payloadBytes > 0) {
        payload = getRuntimeContext().getState(new ValueStateDescriptor<>("payload", byte[].class));
      }
    }

    @Override
    public void processElement(Long value, Context context, Collector<Long> out) throws Exception {
      Long previous = count.value();
      count.update(previous == null ? 1 : previous + 1);
      if (payload != null) {
        byte[] bytes = payload.value();
        if (bytes == null) {
          bytes = new byte[payloadBytes];
        }
        bytes[(int) (value % payloadBytes)]++;
        payload.update(bytes);
      }
      if (++seen == records / 2 && attempt <= restarts) {
        Thread.sleep(1_500); // the compaction scheduler's scans run meanwhile
        throw new IllegalStateException("planned failure of attempt " + attempt);
      }
    }
  }
}
