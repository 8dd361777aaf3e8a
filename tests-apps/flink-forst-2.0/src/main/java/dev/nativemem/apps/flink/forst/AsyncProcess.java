package dev.nativemem.apps.flink.forst;

import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.api.java.tuple.Tuple2;
import org.apache.flink.runtime.asyncprocessing.operators.AsyncKeyedProcessOperator;
import org.apache.flink.streaming.api.datastream.KeyedStream;
import org.apache.flink.streaming.api.datastream.SingleOutputStreamOperator;
import org.apache.flink.streaming.api.functions.KeyedProcessFunction;

/**
 * Applies the keyed function with asynchronous state, Flink 2.0.0: its {@code process} builds the
 * synchronous operator even after {@code enableAsyncState()}, whose state store then refuses the
 * State V2 descriptor ("only supports state v2 APIs"); the asynchronous operator is given by hand.
 */
final class AsyncProcess {
  private AsyncProcess() {}

  static SingleOutputStreamOperator<Tuple2<Long, Long>> process(
      KeyedStream<Long, Long> keyed,
      KeyedProcessFunction<Long, Long, Tuple2<Long, Long>> function) {
    return keyed
        .enableAsyncState()
        .transform(
            "async-counter",
            Types.TUPLE(Types.LONG, Types.LONG),
            new AsyncKeyedProcessOperator<>(function));
  }
}
