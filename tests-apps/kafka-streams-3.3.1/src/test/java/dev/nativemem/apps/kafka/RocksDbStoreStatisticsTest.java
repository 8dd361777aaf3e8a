package dev.nativemem.apps.kafka;

import static org.junit.jupiter.api.Assertions.assertAll;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.nativemem.apps.harness.AgentReport;
import dev.nativemem.apps.harness.AppJvm;
import dev.nativemem.apps.harness.AppRun;
import java.io.File;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.List;
import java.util.stream.Collectors;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * KAFKA-14432 on a real release: with metrics recording level DEBUG, Kafka Streams 3.3.1's
 * RocksDBStore sets a {@code new Statistics()} on each store's options and never closes it (its
 * bytecode: {@code close()} has no {@code Statistics.close}; 3.3.2 added it). With the agent, the
 * leaked Statistics created there equal the stores the application opened, and the report names
 * KAFKA-14432 with the version Maven resolved; on 3.3.2, the control, there are none and no site is
 * named.
 */
class RocksDbStoreStatisticsTest {
  private static final int DRIVERS = 2;
  private static final int STORES = 3;
  private static final String KAFKA = System.getProperty("kafka.version", "unknown");
  private static final boolean LEAKS = Boolean.getBoolean("kafka.statistics.leaks");
  private static final String SET_UP_STATISTICS =
      "at org.apache.kafka.streams.state.internals.RocksDBStore.maybeSetUpStatistics(";

  /** Accepts the catalogue's entry for this JVM: its sites are then marked, not hidden. */
  private static final String ACCEPT_KAFKA_14432 = "nativemem.handles.known=KAFKA-14432";

  private static AppRun run;
  private static AgentReport report;
  private static long opened;

  @BeforeAll
  static void runTheTopologyAtDebugLevel() throws Exception {
    String classPath =
        System.getProperty("job.classes")
            + File.pathSeparator
            + Files.readString(Paths.get(System.getProperty("job.classpath.file"))).trim();
    run =
        new AppJvm("kafka-streams-" + KAFKA)
            .jvmArg("-D" + ACCEPT_KAFKA_14432)
            .main(
                classPath,
                StoresUnderTestDriver.class.getName(),
                "" + DRIVERS,
                "" + STORES,
                "DEBUG");
    assertEquals(0, run.exitCode(), run.toString());
    report = run.report();
    opened = run.counter("stores_opened");
    assertEquals(DRIVERS * STORES, opened, run.toString());
  }

  private static List<AgentReport.Site> statisticsSetUpByKafka() {
    return report.sites().stream()
        .filter(s -> s.kind().equals("Statistics") && s.stack().contains(SET_UP_STATISTICS))
        .collect(Collectors.toList());
  }

  @Test
  void statisticsLeftByRocksDbStoreEqualTheStoresOpened() {
    List<AgentReport.Site> sites = statisticsSetUpByKafka();
    assertAll(
        () ->
            assertEquals(
                LEAKS ? opened : 0,
                sites.stream().mapToLong(s -> s.leaked() + s.open()).sum(),
                report.summary()),
        () -> assertEquals(0, report.count("Statistics", "open"), report.summary()));
  }

  @Test
  void theReportNamesKafka14432WithTheVersionRunOnlyWhereItLeaks() {
    for (AgentReport.Site site : statisticsSetUpByKafka()) {
      assertEquals("KAFKA-14432", site.knownId(), site.text());
      assertEquals(List.of(KAFKA), site.knownVersions(), site.text());
      assertTrue(
          String.valueOf(site.accepted()).endsWith("accepted in this JVM by known=KAFKA-14432"),
          site.text());
    }
    for (AgentReport.Site site : report.sites()) {
      if (site.knownId() == null) {
        assertEquals(null, site.accepted(), site.text()); // known= accepts its entry, no more
      }
    }
    List<AgentReport.Site> named =
        report.sites().stream()
            .filter(s -> "KAFKA-14432".equals(s.knownId()))
            .collect(Collectors.toList());
    assertEquals(LEAKS, !named.isEmpty(), report.summary());
  }

  /** The catalogue against this release's jars: its Kafka frames exist, its version is read. */
  @Test
  void theCatalogueChecksOutAgainstThisReleasesJars() throws Exception {
    String classPath = Files.readString(Paths.get(System.getProperty("job.classpath.file"))).trim();
    AppRun check = new AppJvm("known-leaks-kafka-" + KAFKA).knownLeaks(classPath);
    assertEquals(0, check.exitCode(), "a catalogue pattern matches nothing:\n" + check);
    String line =
        check.stdout().lines().filter(l -> l.startsWith("KAFKA-14432")).findFirst().orElse("");
    assertTrue(
        line.endsWith(
            "Kafka Streams "
                + KAFKA
                + (LEAKS ? ": AFFECTED" : ": not affected")
                + " (fixed in: 3.3.2 and 3.4.0)"),
        check.stdout());
  }
}
