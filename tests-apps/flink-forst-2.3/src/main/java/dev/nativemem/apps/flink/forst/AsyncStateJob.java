package dev.nativemem.apps.flink.forst;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.state.CheckpointListener;
import org.apache.flink.api.common.state.v2.ValueState;
import org.apache.flink.api.common.state.v2.ValueStateDescriptor;
import org.apache.flink.api.java.tuple.Tuple2;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.KeyedProcessFunction;
import org.apache.flink.streaming.api.functions.sink.legacy.SinkFunction;
import org.apache.flink.util.Collector;

/**
 * A keyed job on Flink 2.x's ForSt state backend with asynchronous state (State V2): each record
 * reads its key's count through {@code asyncValue()} and writes it back through {@code
 * asyncUpdate()}, so the reads run in batches on ForSt's executor threads. Checkpoints go to a
 * file:// directory under {@code java.io.tmpdir}, ForSt's primary (disaggregated) directory too;
 * the first attempt fails after a checkpoint completed and the job restores from it. Prints what it
 * did; Flink's log (stderr) says which backends it built and which batches it ran.
 */
public final class AsyncStateJob {
  static final long RECORDS = 40_000;
  static final long KEYS = 4_000;

  /** Attempts that opened the keyed function: one per keyed backend. */
  static final AtomicInteger ATTEMPTS = new AtomicInteger();

  /** Checkpoints the keyed function heard complete, over all attempts. */
  static final AtomicInteger CHECKPOINTS = new AtomicInteger();

  /** The highest count the sink saw per key (a restore replays records after the checkpoint). */
  static final Map<Long, Long> COUNTS = new ConcurrentHashMap<>();

  private AsyncStateJob() {}

  public static void main(String[] args) throws Exception {
    int restarts = Integer.parseInt(args[0]);
    Path base = Files.createDirectories(Paths.get(System.getProperty("java.io.tmpdir"), "forst"));
    StreamExecutionEnvironment env =
        StreamExecutionEnvironment.getExecutionEnvironment(
            Configuration.fromMap(settings(restarts, base)));
    env.setParallelism(1);
    AsyncProcess.process(
            env.fromSequence(0, RECORDS - 1).keyBy(v -> v % KEYS), new AsyncCounter(restarts))
        .name("async-counter")
        .addSink(new MaxPerKey())
        .name("max-per-key");
    env.execute("async state job on ForSt");
    long sum = 0;
    for (long count : COUNTS.values()) {
      sum += count;
    }
    System.out.println("attempts " + ATTEMPTS.get());
    System.out.println("checkpoints_completed " + CHECKPOINTS.get());
    System.out.println("keys_counted " + COUNTS.size());
    System.out.println("records_counted " + sum);
    for (int i = 0; i < 5; i++) {
      System.gc();
      Thread.sleep(100);
    }
    // Non-daemon threads the job's MiniCluster leaves behind on ForSt keep the JVM alive; the
    // agent writes its report in the exit's shutdown hook.
    System.exit(0);
  }

  private static Map<String, String> settings(int restarts, Path base) {
    Map<String, String> conf = new HashMap<>();
    conf.put("state.backend.type", "forst");
    conf.put("state.backend.forst.primary-dir", base.resolve("primary").toUri().toString());
    conf.put("state.backend.forst.local-dir", base.resolve("local").toString());
    // One read sub-batch per batch of gets: one ReadOptions per batch (FLINK-40327).
    conf.put("state.backend.forst.executor.read-io-parallelism", "1");
    conf.put("execution.checkpointing.dir", base.resolve("checkpoints").toUri().toString());
    conf.put("execution.checkpointing.interval", "50 ms");
    conf.put("restart-strategy.type", "fixed-delay");
    conf.put("restart-strategy.fixed-delay.attempts", "" + restarts);
    conf.put("restart-strategy.fixed-delay.delay", "10 ms");
    return conf;
  }

  /**
   * Counts per key through asynchronous state; the first {@code restarts} attempts fail at the
   * first record after a completed checkpoint past a quarter of the input.
   */
  static final class AsyncCounter extends KeyedProcessFunction<Long, Long, Tuple2<Long, Long>>
      implements CheckpointListener {
    private final int restarts;
    private transient ValueState<Long> count;
    private transient int attempt;
    private transient long seen;
    private transient boolean checkpointed;

    AsyncCounter(int restarts) {
      this.restarts = restarts;
    }

    @Override
    public void open(OpenContext context) {
      attempt = ATTEMPTS.incrementAndGet();
      count = getRuntimeContext().getState(new ValueStateDescriptor<>("count", Long.class));
    }

    @Override
    public void processElement(Long value, Context context, Collector<Tuple2<Long, Long>> out)
        throws Exception {
      if (++seen % 100 == 0) {
        Thread.sleep(1); // about 400 ms per attempt: checkpoints complete meanwhile
      }
      if (attempt <= restarts && checkpointed && seen > RECORDS / 4) {
        throw new IllegalStateException("planned failure of attempt " + attempt);
      }
      long key = context.getCurrentKey();
      count
          .asyncValue()
          .thenAccept(
              previous -> {
                long next = previous == null ? 1 : previous + 1;
                count.asyncUpdate(next);
                out.collect(Tuple2.of(key, next));
              });
    }

    @Override
    public void notifyCheckpointComplete(long checkpointId) {
      CHECKPOINTS.incrementAndGet();
      checkpointed = true;
    }
  }

  /** Keeps the highest count seen per key. */
  static final class MaxPerKey implements SinkFunction<Tuple2<Long, Long>> {
    @Override
    public void invoke(Tuple2<Long, Long> value, Context context) {
      COUNTS.merge(value.f0, value.f1, Math::max);
    }
  }
}
