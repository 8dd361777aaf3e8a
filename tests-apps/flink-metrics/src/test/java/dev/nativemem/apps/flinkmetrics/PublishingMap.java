package dev.nativemem.apps.flinkmetrics;

import dev.nativemem.flink.NativeMemoryFlinkMetrics;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.functions.RichMapFunction;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.junit.jupiter.api.Assumptions;

/**
 * A user's function: registers the gauges in {@code open()}, as docs/flink.md says, then holds its
 * subtask open until the test has read the reporter (so no subtask's group closes meanwhile).
 */
final class PublishingMap extends RichMapFunction<Long, Long> {
  static final AtomicInteger CALLS = new AtomicInteger();
  static final AtomicInteger REGISTERED = new AtomicInteger();
  static volatile CountDownLatch opened = new CountDownLatch(0);
  static volatile CountDownLatch release = new CountDownLatch(0);

  /**
   * Starts a MiniCluster job of {@code parallelism} subtasks in one TaskManager, every metric
   * reporter of {@code conf} configured as well as the test's {@link CapturingReporter}; returns
   * when all subtasks are open (and held until {@link #release}).
   */
  static JobClient start(int parallelism, Map<String, String> conf) throws Exception {
    int java = Runtime.version().feature();
    Assumptions.assumeTrue(
        java == 17,
        "Flink's MiniCluster is tested on JDK 17 only (as in ../flink-2.2); this is JDK " + java);
    PlantedHandle.ensureOpen();
    Configuration configuration = Configuration.fromMap(conf);
    configuration.setString(
        "metrics.reporter.captured.factory.class", CapturingReporterFactory.class.getName());
    configuration.setString("taskmanager.numberOfTaskSlots", "" + parallelism);
    StreamExecutionEnvironment env =
        StreamExecutionEnvironment.getExecutionEnvironment(configuration);
    env.setParallelism(parallelism);
    expect(parallelism);
    env.fromSequence(0, parallelism - 1).rebalance().map(new PublishingMap()).print();
    JobClient job =
        env.executeAsync("nativemem-flink on Flink " + System.getProperty("flink.version"));
    if (!opened.await(2, TimeUnit.MINUTES)) {
      job.cancel();
      throw new IllegalStateException("the subtasks never opened");
    }
    return job;
  }

  private static void expect(int parallelism) {
    CALLS.set(0);
    REGISTERED.set(0);
    opened = new CountDownLatch(parallelism);
    release = new CountDownLatch(1);
  }

  @Override
  public void open(OpenContext context) throws InterruptedException {
    CALLS.incrementAndGet();
    if (NativeMemoryFlinkMetrics.register(getRuntimeContext().getMetricGroup())) {
      REGISTERED.incrementAndGet();
    }
    opened.countDown();
    if (!release.await(2, TimeUnit.MINUTES)) {
      throw new IllegalStateException("the test never released the job");
    }
  }

  @Override
  public Long map(Long value) {
    return value;
  }
}
