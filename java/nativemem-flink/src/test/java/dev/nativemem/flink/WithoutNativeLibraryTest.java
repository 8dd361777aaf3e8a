package dev.nativemem.flink;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import org.apache.flink.metrics.Gauge;
import org.apache.flink.metrics.MetricGroup;
import org.apache.flink.metrics.groups.UnregisteredMetricsGroup;
import org.junit.jupiter.api.Test;

/**
 * This JVM's nativemem cannot load its native library ({@code nativemem.library.path} names a file
 * that does not exist, set by the build): the job's {@code open()} still succeeds, no gauge is
 * registered, and one warning says why.
 */
class WithoutNativeLibraryTest {
  @Test
  void registerRegistersNothingAndDoesNotThrow() {
    AtomicInteger gauges = new AtomicInteger();
    MetricGroup group =
        new UnregisteredMetricsGroup() {
          @Override
          public <T, G extends Gauge<T>> G gauge(String name, G gauge) {
            gauges.incrementAndGet();
            return gauge;
          }
        };
    List<LogRecord> warnings = new CopyOnWriteArrayList<>();
    Logger log = Logger.getLogger(NativeMemoryFlinkMetrics.class.getName());
    Handler capture =
        new Handler() {
          @Override
          public void publish(LogRecord record) {
            warnings.add(record);
          }

          @Override
          public void flush() {}

          @Override
          public void close() {}
        };
    log.addHandler(capture);
    try {
      assertFalse(NativeMemoryFlinkMetrics.register(group));
      assertFalse(NativeMemoryFlinkMetrics.register(group), "and again, quietly");
    } finally {
      log.removeHandler(capture);
    }
    assertEquals(0, gauges.get());
    assertEquals(1, warnings.size(), "one warning");
    assertEquals(Level.WARNING, warnings.get(0).getLevel());
    assertTrue(
        warnings.get(0).getMessage().contains("nativemem.library.path"),
        "the warning says what failed: " + warnings.get(0).getMessage());
  }
}
