package dev.nativemem.apps.kafka;

import static org.junit.jupiter.api.Assertions.assertAll;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.nativemem.apps.harness.AgentReport;
import dev.nativemem.apps.harness.AgentReport.Site;
import dev.nativemem.apps.harness.AppJvm;
import dev.nativemem.apps.harness.AppRun;
import java.io.File;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.List;
import java.util.function.Predicate;
import java.util.stream.Collectors;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Kafka Streams' RocksDB stores under {@code TopologyTestDriver}, with the agent: Kafka closes what
 * it opens; what remains is RocksDB's own {@code defaultReadOptions_}, one per store, labelled as
 * the known upstream leak; Kafka's options adapter counts as RocksDB's {@code Options}.
 */
class StoresUnderTestDriverTest {
  private static final int DRIVERS = 3;
  private static final int STORES = 4;

  private static AppRun run;
  private static AgentReport report;
  private static long opened;

  @BeforeAll
  static void runTheTopology() throws Exception {
    String classPath =
        System.getProperty("job.classes")
            + File.pathSeparator
            + Files.readString(Paths.get(System.getProperty("job.classpath.file"))).trim();
    run =
        new AppJvm("kafka-streams")
            .main(classPath, StoresUnderTestDriver.class.getName(), "" + DRIVERS, "" + STORES);
    assertEquals(0, run.exitCode(), run.toString());
    report = run.report();
    opened = run.counter("stores_opened");
    assertEquals(DRIVERS * STORES, opened, run.toString());
  }

  /**
   * The {@code ReadOptions} every {@code RocksDB} object makes and never closes (rocksdb#15036).
   */
  private static boolean rocksDbsOwnReadOptions(Site site) {
    return site.kind().equals("ReadOptions")
        && site.stack().contains("at org.rocksdb.RocksDB.<init>");
  }

  private static List<Site> fromKafka(Predicate<Site> state) {
    return report.sites().stream()
        .filter(s -> s.stack().contains("at org.apache.kafka."))
        .filter(s -> !rocksDbsOwnReadOptions(s))
        .filter(state)
        .collect(Collectors.toList());
  }

  @Test
  void kafkaStreamsLeaksNoHandle() {
    List<Site> leaked = fromKafka(s -> s.leaked() > 0);
    assertTrue(leaked.isEmpty(), "leaked from Kafka's code: " + leaked + "\n" + report.summary());
  }

  /**
   * Nothing is reported open at Kafka's lines either: an Inflater the JDK keeps in its class-path
   * jar's cache belongs to that cache, not to the code that happened to load a class.
   */
  @Test
  void kafkaStreamsLeavesNoHandleOpen() {
    List<Site> open = fromKafka(s -> s.open() > 0);
    assertTrue(open.isEmpty(), "open from Kafka's code: " + open + "\n" + report.summary());
  }

  @Test
  void rocksDbsOwnReadOptionsAreOnePerStoreLabelledAsTheKnownUpstreamLeak() {
    List<Site> own =
        report.sites().stream()
            .filter(StoresUnderTestDriverTest::rocksDbsOwnReadOptions)
            .collect(Collectors.toList());
    assertEquals(
        opened, own.stream().mapToLong(s -> s.leaked() + s.open()).sum(), report.summary());
    for (Site site : own) {
      assertTrue(
          site.text().contains("rocksdb#15036"),
          "not labelled as the known upstream leak (facebook/rocksdb#15036): " + site.text());
    }
  }

  @Test
  void kafkasOptionsAdapterCountsAsOptions() {
    assertAll(
        () -> assertEquals(opened, report.count("Options", "created"), report.summary()),
        () -> assertEquals(opened, report.count("Options", "closed"), report.summary()),
        () ->
            assertFalse(
                report.hasKind("RocksDBGenericOptionsToDbOptionsColumnFamilyOptionsAdapter"),
                "a subclass is its RocksDB base kind: " + report.summary()));
  }
}
