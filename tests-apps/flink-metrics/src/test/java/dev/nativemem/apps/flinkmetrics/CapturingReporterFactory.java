package dev.nativemem.apps.flinkmetrics;

import java.util.Properties;
import org.apache.flink.metrics.reporter.MetricReporter;
import org.apache.flink.metrics.reporter.MetricReporterFactory;

/** What {@code metrics.reporter.captured.factory.class} names. */
public final class CapturingReporterFactory implements MetricReporterFactory {
  @Override
  public MetricReporter createMetricReporter(Properties properties) {
    return new CapturingReporter();
  }
}
