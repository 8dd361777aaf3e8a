package dev.nativemem.apps.kafka;

import java.util.Properties;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.TestInputTopic;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.TopologyTestDriver;
import org.apache.kafka.streams.processor.StateStore;
import org.apache.kafka.streams.processor.api.Processor;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.state.Stores;

/**
 * A topology that counts words into RocksDB key-value stores, run under {@link TopologyTestDriver}
 * {@code drivers} times, each driver with {@code stores} stores, at the metrics recording level
 * given third (Kafka's default, INFO, when absent; DEBUG makes Kafka set RocksDB statistics on);
 * prints how many persistent stores the drivers opened.
 */
public final class StoresUnderTestDriver {
  private static final String TOPIC = "words";
  private static final int RECORDS = 20;

  private StoresUnderTestDriver() {}

  public static void main(String[] args) throws Exception {
    int drivers = Integer.parseInt(args[0]);
    int stores = Integer.parseInt(args[1]);
    String recordingLevel = args.length > 2 ? args[2] : "INFO";
    long opened = 0;
    for (int d = 0; d < drivers; d++) {
      try (TopologyTestDriver driver =
          new TopologyTestDriver(topology(stores), settings(recordingLevel))) {
        TestInputTopic<String, String> input =
            driver.createInputTopic(TOPIC, new StringSerializer(), new StringSerializer());
        for (int i = 0; i < RECORDS; i++) {
          input.pipeInput("key-" + i, "word-" + (i % 7));
        }
        for (StateStore store : driver.getAllStateStores().values()) {
          opened += store.persistent() ? 1 : 0;
        }
      }
    }
    System.out.println("stores_opened " + opened);
    for (int i = 0; i < 5; i++) {
      System.gc();
      Thread.sleep(100);
    }
  }

  private static Properties settings(String recordingLevel) {
    Properties props = new Properties();
    props.put(StreamsConfig.METRICS_RECORDING_LEVEL_CONFIG, recordingLevel);
    props.put(StreamsConfig.APPLICATION_ID_CONFIG, "nativemem-word-counts");
    props.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, "unused:9092");
    props.put(StreamsConfig.STATE_DIR_CONFIG, System.getProperty("java.io.tmpdir"));
    return props;
  }

  private static Topology topology(int stores) {
    Topology topology = new Topology();
    topology.addSource(
        "source", Serdes.String().deserializer(), Serdes.String().deserializer(), TOPIC);
    String[] names = new String[stores];
    for (int s = 0; s < stores; s++) {
      names[s] = "counts-" + s;
    }
    topology.addProcessor("count", () -> new Counter(names), "source");
    for (String name : names) {
      topology.addStateStore(
          Stores.keyValueStoreBuilder(
              Stores.persistentKeyValueStore(name), Serdes.String(), Serdes.Long()),
          "count");
    }
    return topology;
  }

  /** Counts each value in every store. */
  private static final class Counter implements Processor<String, String, Void, Void> {
    private final String[] names;
    private KeyValueStore<String, Long>[] stores;

    Counter(String[] names) {
      this.names = names;
    }

    @Override
    @SuppressWarnings("unchecked")
    public void init(ProcessorContext<Void, Void> context) {
      stores = new KeyValueStore[names.length];
      for (int s = 0; s < names.length; s++) {
        stores[s] = context.getStateStore(names[s]);
      }
    }

    @Override
    public void process(Record<String, String> record) {
      for (KeyValueStore<String, Long> store : stores) {
        Long count = store.get(record.value());
        store.put(record.value(), count == null ? 1 : count + 1);
      }
    }
  }
}
