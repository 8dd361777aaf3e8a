package dev.nativemem.apps.flink.forst;

import org.apache.flink.api.java.tuple.Tuple2;
import org.apache.flink.streaming.api.datastream.KeyedStream;
import org.apache.flink.streaming.api.datastream.SingleOutputStreamOperator;
import org.apache.flink.streaming.api.functions.KeyedProcessFunction;

/**
 * Applies the keyed function with asynchronous state, Flink 2.1 and later: {@code process} after
 * {@code enableAsyncState()} builds the asynchronous operator ({@code ../flink-forst-2.0} has Flink
 * 2.0.0's way).
 */
final class AsyncProcess {
  private AsyncProcess() {}

  static SingleOutputStreamOperator<Tuple2<Long, Long>> process(
      KeyedStream<Long, Long> keyed,
      KeyedProcessFunction<Long, Long, Tuple2<Long, Long>> function) {
    return keyed.enableAsyncState().process(function);
  }
}
