package dev.nativemem.apps.kafka.dsl;

import static org.junit.jupiter.api.Assertions.assertAll;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.nativemem.apps.harness.AgentReport;
import dev.nativemem.apps.harness.AgentReport.Site;
import dev.nativemem.apps.harness.AppJvm;
import dev.nativemem.apps.harness.AppRun;
import dev.nativemem.apps.harness.JobClassPath;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.function.Predicate;
import java.util.stream.Collectors;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Kafka Streams' DSL on RocksDB (counts, windowed counts in a segmented store, a stream-table join,
 * range scans) under {@code TopologyTestDriver}, restarted by a new driver each time, with the
 * agent: every RocksDB Kafka opens equals the stores and segments the test counts on its own; Kafka
 * closes everything it opens; what remains is RocksDB's own {@code defaultReadOptions_}, one per
 * database, named as the known upstream leak.
 */
class WindowsJoinsAndScansTest {
  private static final int DRIVERS = 3;
  private static final String KAFKA = System.getProperty("kafka.version", "unknown");

  private static AppRun run;
  private static AgentReport report;

  @BeforeAll
  static void runTheTopology() throws Exception {
    String classPath = JobClassPath.withClasses();
    run =
        new AppJvm("kafka-streams-dsl-" + KAFKA)
            .main(classPath, WindowsJoinsAndScans.class.getName(), "" + DRIVERS);
    assertEquals(0, run.exitCode(), run.toString());
    report = run.report();
  }

  /** The (word, window) pairs the input makes, by the job's own rule. */
  private static long windowsExpected() {
    Set<String> windows = new HashSet<>();
    long sizeMs = WindowsJoinsAndScans.WINDOW.toMillis();
    for (int i = 0; i < WindowsJoinsAndScans.RECORDS; i++) {
      long at = i * (120_000L / WindowsJoinsAndScans.RECORDS);
      windows.add((i % WindowsJoinsAndScans.DISTINCT_WORDS) + "@" + at / sizeMs);
    }
    return windows.size();
  }

  /** The databases Kafka opened, by the test's own count: key-value stores and window segments. */
  private static long databasesOpened() {
    return run.counter("key_value_stores_opened") + run.counter("window_segments");
  }

  @Test
  void theTopologyDidWhatItWasGiven() {
    long records = (long) DRIVERS * WindowsJoinsAndScans.RECORDS;
    assertAll(
        () -> assertEquals(records, run.counter("records_piped"), run.toString()),
        () -> assertEquals(records, run.counter("records_joined"), run.toString()),
        () ->
            assertEquals(
                (long) DRIVERS * WindowsJoinsAndScans.DISTINCT_WORDS,
                run.counter("keys_scanned"),
                run.toString()),
        () ->
            assertEquals(
                DRIVERS * windowsExpected(), run.counter("windows_scanned"), run.toString()),
        // users' table and the counts per driver; at least two segments per driver
        () -> assertEquals(2L * DRIVERS, run.counter("key_value_stores_opened"), run.toString()),
        () -> assertTrue(run.counter("window_segments") >= 2L * DRIVERS, run.toString()));
  }

  @Test
  void eachDatabaseKafkaOpenedIsCountedAndClosed() {
    assertAll(
        () -> assertEquals(databasesOpened(), report.count("RocksDB", "created"), report.summary()),
        () -> assertEquals(0, report.count("RocksDB", "open"), report.summary()),
        () -> assertEquals(0, report.count("RocksDB", "leaked"), report.summary()));
  }

  /** The iterators of the range scans and of Kafka's own reads are all closed. */
  @Test
  void theScansLeaveNoIterator() {
    assertTrue(report.count("RocksIterator", "created") > 0, report.summary());
    assertEquals(0, report.count("RocksIterator", "open"), report.summary());
    assertEquals(0, report.count("RocksIterator", "leaked"), report.summary());
  }

  private static boolean rocksDbsOwnReadOptions(Site site) {
    return site.kind().equals("ReadOptions")
        && site.stack().contains("at org.rocksdb.RocksDB.<init>");
  }

  @Test
  void rocksDbsOwnReadOptionsAreOnePerDatabaseNamedAsTheKnownUpstreamLeak() {
    List<Site> own =
        report.sites().stream()
            .filter(WindowsJoinsAndScansTest::rocksDbsOwnReadOptions)
            .collect(Collectors.toList());
    assertEquals(
        databasesOpened(),
        own.stream().mapToLong(s -> s.leaked() + s.open()).sum(),
        report.summary());
    for (Site site : own) {
      assertEquals("facebook/rocksdb#15036", site.knownId(), site.text());
    }
  }

  private static List<Site> fromKafka(Predicate<Site> state) {
    return report.sites().stream()
        .filter(s -> s.stack().contains("at org.apache.kafka."))
        .filter(s -> !rocksDbsOwnReadOptions(s))
        .filter(state)
        .collect(Collectors.toList());
  }

  @Test
  void kafkaStreamsLeaksNothingElseAndLeavesNothingOpen() {
    List<Site> leaked = fromKafka(s -> s.leaked() > 0);
    List<Site> open = fromKafka(s -> s.open() > 0);
    assertAll(
        () -> assertTrue(leaked.isEmpty(), "leaked at Kafka's lines: " + leaked + report.summary()),
        () -> assertTrue(open.isEmpty(), "open at Kafka's lines: " + open + report.summary()));
  }
}
