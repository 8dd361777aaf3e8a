package dev.nativemem.apps.flinkmetrics;

import dev.nativemem.flink.NativeMemoryFlinkMetrics;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.functions.RichMapFunction;

/**
 * A user's function: registers the gauges in {@code open()}, as docs/flink.md says, then holds its
 * subtask open until the test has read the reporter (so no subtask's group closes meanwhile).
 */
final class PublishingMap extends RichMapFunction<Long, Long> {
  static final AtomicInteger CALLS = new AtomicInteger();
  static final AtomicInteger REGISTERED = new AtomicInteger();
  static volatile CountDownLatch opened = new CountDownLatch(0);
  static volatile CountDownLatch release = new CountDownLatch(0);

  /** Before a job of {@code parallelism} subtasks. */
  static void expect(int parallelism) {
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
