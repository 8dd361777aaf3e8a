package dev.nativemem.apps.kafka.dsl;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.time.Instant;
import java.util.Properties;
import java.util.stream.Stream;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.TestInputTopic;
import org.apache.kafka.streams.TestOutputTopic;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.TopologyTestDriver;
import org.apache.kafka.streams.kstream.Consumed;
import org.apache.kafka.streams.kstream.Grouped;
import org.apache.kafka.streams.kstream.KStream;
import org.apache.kafka.streams.kstream.KTable;
import org.apache.kafka.streams.kstream.Materialized;
import org.apache.kafka.streams.kstream.Produced;
import org.apache.kafka.streams.kstream.TimeWindows;
import org.apache.kafka.streams.kstream.Windowed;
import org.apache.kafka.streams.processor.StateStore;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.state.WindowStore;

/**
 * A DSL topology on RocksDB stores, run under {@link TopologyTestDriver} {@code drivers} times (a
 * restart each): a count per word (key-value store), a windowed count per word (a segmented window
 * store: one RocksDB per segment), a stream-table join against a table of users (its own store),
 * and range scans of the counts and of the windows once the input is in. Prints what it counted
 * independently of the agent: records piped, records joined, the persistent key-value stores the
 * drivers report, the window segments on disk (each driver's, before its close deletes them), the
 * keys and windows the scans returned.
 */
public final class WindowsJoinsAndScans {
  static final String WORDS = "words";
  static final String USERS = "users";
  static final String JOINED = "joined";
  static final String COUNTS = "counts";
  static final String WINDOWED = "windowed-counts";
  static final int RECORDS = 120;
  static final int USER_COUNT = 6;
  static final int DISTINCT_WORDS = 7;

  /** Window size plus grace is the retention; segments are 60 s (Kafka's minimum) each. */
  static final Duration WINDOW = Duration.ofSeconds(30);

  static final Duration GRACE = Duration.ofSeconds(90);

  private WindowsJoinsAndScans() {}

  public static void main(String[] args) throws Exception {
    int drivers = Integer.parseInt(args[0]);
    Path stateDir = Paths.get(System.getProperty("java.io.tmpdir"), "kafka-state");
    long piped = 0;
    long joined = 0;
    long stores = 0;
    long segments = 0;
    long keysScanned = 0;
    long windowsScanned = 0;
    for (int d = 0; d < drivers; d++) {
      try (TopologyTestDriver driver = new TopologyTestDriver(topology(), settings(stateDir))) {
        TestInputTopic<String, String> users =
            driver.createInputTopic(USERS, new StringSerializer(), new StringSerializer());
        for (int u = 0; u < USER_COUNT; u++) {
          users.pipeInput("user-" + u, "name-" + u, Instant.ofEpochMilli(0));
        }
        TestInputTopic<String, String> words =
            driver.createInputTopic(WORDS, new StringSerializer(), new StringSerializer());
        for (int i = 0; i < RECORDS; i++) {
          // event times spread over two minutes: two window segments
          long at = i * (120_000L / RECORDS);
          words.pipeInput("user-" + (i % USER_COUNT), "word-" + (i % DISTINCT_WORDS), at);
          piped++;
        }
        TestOutputTopic<String, String> out =
            driver.createOutputTopic(JOINED, new StringDeserializer(), new StringDeserializer());
        joined += out.readValuesToList().size();
        KeyValueStore<String, Long> counts = driver.getKeyValueStore(COUNTS);
        try (KeyValueIterator<String, Long> range = counts.range("word-0", "word-9")) {
          while (range.hasNext()) {
            range.next();
            keysScanned++;
          }
        }
        WindowStore<String, Long> windows = driver.getWindowStore(WINDOWED);
        try (KeyValueIterator<Windowed<String>, Long> all =
            windows.fetchAll(Instant.ofEpochMilli(0), Instant.ofEpochMilli(120_000))) {
          while (all.hasNext()) {
            all.next();
            windowsScanned++;
          }
        }
        for (StateStore store : driver.getAllStateStores().values()) {
          // a window store is one store of many RocksDBs (its segments, counted on disk)
          stores += store.persistent() && !(store instanceof WindowStore) ? 1 : 0;
        }
        segments += segmentsOnDisk(stateDir);
      }
    }
    System.out.println("records_piped " + piped);
    System.out.println("records_joined " + joined);
    System.out.println("key_value_stores_opened " + stores);
    System.out.println("window_segments " + segments);
    System.out.println("keys_scanned " + keysScanned);
    System.out.println("windows_scanned " + windowsScanned);
    for (int i = 0; i < 5; i++) {
      System.gc();
      Thread.sleep(100);
    }
  }

  /** The window store's segment directories ({@code <store>.<segment id>}) under the state dir. */
  private static long segmentsOnDisk(Path stateDir) throws IOException {
    try (Stream<Path> files = Files.walk(stateDir)) {
      return files
          .filter(Files::isDirectory)
          .filter(p -> p.getParent().getFileName().toString().equals(WINDOWED))
          .filter(p -> p.getFileName().toString().startsWith(WINDOWED + "."))
          .count();
    }
  }

  private static Properties settings(Path stateDir) {
    Properties props = new Properties();
    props.put(StreamsConfig.APPLICATION_ID_CONFIG, "nativemem-windows-joins-scans");
    props.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, "unused:9092");
    props.put(StreamsConfig.STATE_DIR_CONFIG, stateDir.toString());
    return props;
  }

  static Topology topology() {
    StreamsBuilder builder = new StreamsBuilder();
    KStream<String, String> words =
        builder.stream(WORDS, Consumed.with(Serdes.String(), Serdes.String()));
    KTable<String, String> users =
        builder.table(
            USERS,
            Consumed.with(Serdes.String(), Serdes.String()),
            Materialized.<String, String, KeyValueStore<Bytes, byte[]>>as(USERS + "-table"));
    words
        .join(users, (word, user) -> user + ":" + word)
        .to(JOINED, Produced.with(Serdes.String(), Serdes.String()));
    words
        .map((user, word) -> KeyValue.pair(word, word))
        .groupByKey(Grouped.with(Serdes.String(), Serdes.String()))
        .count(Materialized.<String, Long, KeyValueStore<Bytes, byte[]>>as(COUNTS));
    words
        .map((user, word) -> KeyValue.pair(word, word))
        .groupByKey(Grouped.with(Serdes.String(), Serdes.String()))
        .windowedBy(TimeWindows.ofSizeAndGrace(WINDOW, GRACE))
        .count(
            Materialized.<String, Long, WindowStore<Bytes, byte[]>>as(WINDOWED)
                .withRetention(WINDOW.plus(GRACE)));
    return builder.build();
  }
}
