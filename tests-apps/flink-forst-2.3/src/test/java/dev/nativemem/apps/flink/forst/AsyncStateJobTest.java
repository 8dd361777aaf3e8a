package dev.nativemem.apps.flink.forst;

import static org.junit.jupiter.api.Assertions.assertAll;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.fasterxml.jackson.jr.ob.JSON;
import dev.nativemem.apps.harness.AgentReport;
import dev.nativemem.apps.harness.AppJvm;
import dev.nativemem.apps.harness.AppRun;
import dev.nativemem.apps.harness.JobClassPath;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Flink's keyed job with asynchronous state on the ForSt backend, restarted once from a checkpoint
 * in one MiniCluster, with the agent: ForSt's handles ({@code org.forstdb}) are tracked as {@code
 * forst.*} kinds; what leaked at Flink's lines equals Flink's own log of what it did (FLINK-40327:
 * one ReadOptions per batch of asynchronous reads), ForSt's copy of RocksDB's {@code
 * defaultReadOptions_} is named as RocksDB's, and nothing else is left leaked or open.
 */
class AsyncStateJobTest {
  private static final int RESTARTS = 1;
  private static final String FLINK = System.getProperty("flink.version", "unknown");

  private static final String BACKEND_BUILT = "Finished building ForSt keyed state-backend";

  /** ForStStateExecutor's debug line, once per batch of state requests it executed. */
  private static final Pattern BATCH =
      Pattern.compile(
          "Complete executing a batch of state requests, putRequest size (\\d+), getRequest size"
              + " (\\d+), iterRequest size (\\d+)");

  private static final String MULTI_GET_LINE = ".ForStGeneralMultiGetOperation.lambda$process$0(";
  private static final String FORST_DB_INIT = "at org.forstdb.RocksDB.<init>";

  /** Flink leaves this stream to the cleaner (a leak of Flink's, catalogued). */
  private static final String DESERIALIZE_LINE =
      "org.apache.flink.util.InstantiationUtil.decompressAndDeserializeObject(";

  private static final List<String> FORST_KINDS =
      List.of(
          "forst.RocksDB",
          "forst.ColumnFamilyHandle",
          "forst.ColumnFamilyOptions",
          "forst.DBOptions",
          "forst.ReadOptions",
          "forst.WriteOptions",
          "forst.WriteBatch",
          "forst.LRUCache",
          "forst.WriteBufferManager",
          "forst.Checkpoint",
          "forst.RocksIterator");

  private static AppRun run;
  private static AgentReport report;

  /** Flink 2.x runs on Java 11 and later: this test's JDK, 17, as the other Flink tests. */
  private static final int JAVA = Runtime.version().feature();

  @BeforeEach
  void onJdk17() {
    assumeTrue(JAVA == 17, "Flink " + FLINK + " is tested on JDK 17 only; this is JDK " + JAVA);
  }

  @BeforeAll
  static void runTheJob() throws Exception {
    if (JAVA != 17) {
      return; // each test is skipped, with the reason
    }
    String classPath = JobClassPath.withClasses();
    run =
        new AppJvm("flink-forst-" + FLINK)
            .jvmArg(
                "-Xmx512m",
                "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn",
                "-Dorg.slf4j.simpleLogger.showDateTime=false",
                "-Dorg.slf4j.simpleLogger.log.org.apache.flink.state.forst=info",
                "-Dorg.slf4j.simpleLogger.log.org.apache.flink.state.forst.ForStStateExecutor=debug")
            .main(classPath, AsyncStateJob.class.getName(), "" + RESTARTS);
    assertEquals(0, run.exitCode(), run.toString());
    report = run.report();
  }

  /** Batches of asynchronous reads ForSt ran, by its executor's log: one ReadOptions each. */
  private static long readBatches() {
    Matcher m = BATCH.matcher(run.stdout() + "\n" + run.stderr());
    long batches = 0;
    while (m.find()) {
      batches += Long.parseLong(m.group(2)) > 0 ? 1 : 0;
    }
    return batches;
  }

  private static long leakedAt(String kind, String frame) {
    return report.sites().stream()
        .filter(s -> s.kind().equals(kind) && s.stack().contains(frame))
        .mapToLong(AgentReport.Site::leaked)
        .sum();
  }

  @Test
  void theJobCountedEachRecordOnceAcrossItsRestart() {
    assertAll(
        () -> assertEquals(RESTARTS + 1, run.counter("attempts"), run.toString()),
        () -> assertTrue(run.counter("checkpoints_completed") > 0, run.toString()),
        () -> assertEquals(AsyncStateJob.KEYS, run.counter("keys_counted"), run.toString()),
        () -> assertEquals(AsyncStateJob.RECORDS, run.counter("records_counted"), run.toString()),
        () -> assertEquals(run.counter("attempts"), run.lines(BACKEND_BUILT), run.toString()));
  }

  /** The handles are ForSt's, under their own kinds: none is counted as a RocksDB kind. */
  @Test
  void forstHandlesAreTrackedAsForstKinds() {
    assertAll(
        () -> assertEquals(run.lines(BACKEND_BUILT), report.count("forst.RocksDB", "created")),
        () -> assertEquals(run.lines(BACKEND_BUILT), report.count("forst.RocksDB", "closed")),
        () -> assertTrue(report.count("forst.WriteBatch", "created") > 0, report.summary()),
        () -> assertTrue(report.count("forst.LRUCache", "created") > 0, report.summary()),
        () -> assertEquals(0, report.zombieCapacityBytes(), report.summary()),
        () -> assertEquals(0, report.count("RocksDB", "created"), report.summary()),
        () -> assertEquals(0, report.count("ReadOptions", "created"), report.summary()));
  }

  /**
   * FLINK-40327: one ReadOptions per batch of asynchronous reads, never closed. ForSt logs a batch
   * only when it completes, so each logged batch is one leak, and a batch cut off by the planned
   * failover (or run synchronously) leaks one more without a line: the logged batches are the least
   * the tracker must find. In most runs the two are equal.
   */
  @Test
  void leakedReadOptionsAtTheMultiGetAreAtLeastTheReadBatchesFlinkLogged() {
    long batches = readBatches();
    assertTrue(batches > 0, "the job must read state asynchronously\n" + run);
    long leaked = leakedAt("forst.ReadOptions", MULTI_GET_LINE);
    assertTrue(
        leaked >= batches,
        leaked + " leaked at the multi-get, " + batches + " batches logged\n" + report.summary());
  }

  /**
   * ForSt's copy of RocksDB's {@code defaultReadOptions_} (facebook/rocksdb#15036): one per
   * database opened (leaked, or still open where Flink still holds the closed database's object),
   * named by the catalogue as RocksJava's inside ForSt, not as Flink's.
   */
  @Test
  void forstsDefaultReadOptionsAreNamedAsRocksDbs() {
    long opened = report.count("forst.RocksDB", "created");
    assertEquals(run.lines(BACKEND_BUILT), opened, report.summary());
    long own =
        report.sites().stream()
            .filter(s -> s.kind().equals("forst.ReadOptions") && s.stack().contains(FORST_DB_INIT))
            .mapToLong(s -> s.leaked() + s.open())
            .sum();
    assertEquals(opened, own, report.summary());
    for (AgentReport.Site site : report.sites()) {
      if (site.leaked() + site.open() > 0 && site.stack().contains(FORST_DB_INIT)) {
        assertEquals("forst-default-read-options", site.knownId(), site.text());
      }
    }
  }

  /**
   * No false leak: what leaked is FLINK-40327, ForSt's {@code defaultReadOptions_} and Flink's
   * stream left to the cleaner; no ForSt handle but those {@code defaultReadOptions_} is open once
   * the job is done.
   */
  @Test
  void nothingElseLeakedAndNoForstHandleIsLeftOpen() {
    List<String> unexpected =
        report.sites().stream()
            .filter(s -> s.leaked() > 0)
            .filter(
                s ->
                    !(s.kind().equals("forst.ReadOptions") && s.stack().contains(MULTI_GET_LINE))
                        && !(s.kind().equals("forst.ReadOptions")
                            && s.stack().contains(FORST_DB_INIT))
                        && !(s.kind().equals("Inflater")
                            && s.headline().contains(DESERIALIZE_LINE)))
            .map(AgentReport.Site::toString)
            .collect(Collectors.toList());
    assertTrue(unexpected.isEmpty(), "unexpected leaks " + unexpected + "\n" + report.summary());
    for (String kind : FORST_KINDS) {
      long own =
          report.sites().stream()
              .filter(s -> s.kind().equals(kind) && s.stack().contains(FORST_DB_INIT))
              .mapToLong(AgentReport.Site::open)
              .sum();
      assertEquals(own, report.count(kind, "open"), kind + " open\n" + report.summary());
    }
  }

  /** The catalogue names the leak at Flink's line with the Flink version Maven resolved. */
  @Test
  void theCatalogueNamesFlinksLeakWithTheVersionRun() {
    List<AgentReport.Site> sites =
        report.sites().stream()
            .filter(s -> s.leaked() > 0 && s.stack().contains(MULTI_GET_LINE))
            .collect(Collectors.toList());
    assertTrue(!sites.isEmpty(), report.summary());
    for (AgentReport.Site site : sites) {
      assertEquals("FLINK-40327", site.knownId(), site.text());
      assertEquals(List.of(FLINK), site.knownVersions(), site.text());
    }
  }

  /**
   * The catalogue against this module's real jars ({@code known-leaks --class-path}): the frames it
   * names for ForSt exist, and the versions it reads are the ones Maven resolved (forstjni's from
   * its jar's name: the jar states it nowhere else).
   */
  @Test
  void theCatalogueChecksOutAgainstThisReleasesJars() throws Exception {
    String classPath = JobClassPath.dependencies();
    AppRun check = new AppJvm("known-leaks-forst-" + FLINK).knownLeaks(classPath, "--json");
    assertEquals(0, check.exitCode(), "a catalogue pattern matches nothing:\n" + check);
    Map<Object, Map<?, ?>> byId = new HashMap<>();
    for (Object entry : (List<?>) JSON.std.anyFrom(check.stdout().trim())) {
      byId.put(((Map<?, ?>) entry).get("id"), (Map<?, ?>) entry);
    }
    Map<?, ?> flink = byId.get("FLINK-40327");
    assertEquals(1, ((List<?>) flink.get("frames_present")).size(), flink.toString());
    assertEquals(List.of(FLINK), flink.get("versions"), flink.toString());
    assertEquals(true, flink.get("affected"), flink.toString());
    Map<?, ?> forst = byId.get("forst-default-read-options");
    assertEquals(1, ((List<?>) forst.get("frames_present")).size(), forst.toString());
    assertEquals(
        List.of(System.getProperty("forstjni.version")), forst.get("versions"), forst.toString());
  }
}
