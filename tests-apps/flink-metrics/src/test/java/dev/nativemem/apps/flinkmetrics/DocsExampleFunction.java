package dev.nativemem.apps.flinkmetrics;

import dev.nativemem.flink.NativeMemoryFlinkMetrics;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.functions.RichMapFunction;

/** docs/flink.md's example, compiled against each Flink version this module tests. */
final class DocsExampleFunction extends RichMapFunction<Long, Long> {
  // docs/flink.md block begins
  @Override
  public void open(OpenContext context) {
    NativeMemoryFlinkMetrics.register(getRuntimeContext().getMetricGroup());
  }

  // docs/flink.md block ends

  @Override
  public Long map(Long value) {
    return value;
  }
}
