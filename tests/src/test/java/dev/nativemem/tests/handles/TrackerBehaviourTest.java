package dev.nativemem.tests.handles;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.nativemem.tests.handles.ScenarioJvm.Result;
import dev.nativemem.tests.handles.agent.FixtureRunner;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.springframework.boot.loader.jar.NestedJarFile;

/**
 * What real applications need from the tracker, each planted in a child JVM with the agent: the
 * line blamed, pools, cleaners and finalizers, kinds, and tests that always name the line.
 */
class TrackerBehaviourTest {
  private static final String SCENARIOS = BehaviourScenarios.class.getName();
  private static final String FILE = "(BehaviourScenarios.java:";

  /** This build's extension, ahead of the one the test class path resolved from the repository. */
  private static final Path JUNIT_EXTENSION =
      ScenarioJvm.JAR
          .toAbsolutePath()
          .getParent()
          .getParent()
          .getParent()
          .resolve("nativemem-junit/target/classes");

  private static Result run(String agentOptions, String scenario) throws Exception {
    Result result =
        new ScenarioJvm()
            .mainClass(SCENARIOS)
            .classpath(ScenarioJvm.codeSource(NestedJarFile.class).toString())
            .agent(agentOptions)
            .run(scenario);
    assertEquals(0, result.exitCode(), result.toString());
    assertFalse(result.stderr().contains("hook failed"), result.stderr());
    return result;
  }

  @Test
  void headlineIsTheFirstApplicationFrameByWhereItsClassComesFrom() throws Exception {
    Result result = run("level=full,skip=" + BehaviourScenarios.Wrapper.class.getName(), "frames");
    String failure = result.value("failure");
    String frames = SCENARIOS + ".frames" + FILE;
    // The skipped wrapper and the class loader are in the stack, not in the headline.
    assertTrue(
        failure.contains(
            "leaked ColumnFamilyOptions, created at "
                + frames
                + result.value("wrapper_line")
                + ")"),
        failure);
    assertTrue(failure.contains("Wrapper.newOptions("), failure);
    assertTrue(
        failure.contains(
            "leaked ColumnFamilyOptions, created at " + frames + result.value("loader_line") + ")"),
        failure);
    assertTrue(failure.contains("HandleMakingLoader.newOptions("), failure);
    // A test class in package org.rocksdb, outside the RocksDB jar, is application code.
    assertTrue(
        failure.contains(
            "created at org.rocksdb.OwnSuiteProbe.leak(OwnSuiteProbe.java:"
                + result.value("rocksdb_test_line")
                + ")"),
        failure);
  }

  @Test
  void subclassIsItsRocksDbKindAndKnownUpstreamLeakIsLabelled() throws Exception {
    Result result = run("level=full", "kinds");
    // 3 adapters leaked + 1 closed Options + the one the database was opened with.
    assertEquals(
        "5 3 [" + BehaviourScenarios.AdapterOptions.class.getName() + "]",
        result.value("options"),
        result.toString());
    assertTrue(
        result.value("read_options_known").contains("facebook/rocksdb#15036"), result.toString());
    assertTrue(
        result.value("text").contains("[known upstream leak: RocksDB never closes"),
        result.toString());
    assertTrue(
        result.value("text").contains("as " + BehaviourScenarios.AdapterOptions.class.getName()),
        result.toString());
    assertTrue(
        result.value("json").contains("\"known_leak\":\"RocksDB never closes"), result.toString());
    assertTrue(result.value("text").contains("Tracker memory: "), result.toString());

    Result included = run("level=full,include=Options", "kinds");
    assertTrue(included.value("options").startsWith("5 3 "), included.toString());
  }

  @Test
  void springBootInflaterPoolIsAnOwnershipTransferAndItsCleanerLeaks() throws Exception {
    Result result = run("level=full", "spring-pool");
    int streams = BehaviourScenarios.STREAMS;
    assertEquals("" + streams, result.value("open_at_line"), result.toString());
    assertTrue(
        result
            .value("open_failure")
            .contains(
                streams
                    + " open (never closed) Inflater, created at "
                    + SCENARIOS
                    + ".springPool"
                    + FILE
                    + result.value("open_line")
                    + ")"),
        result.toString());
    assertEquals("null", result.value("closed_failure"), result.toString());
    assertEquals("0", result.value("open_after_close"), result.toString());
    long pooled = Long.parseLong(result.value("pooled"));
    assertTrue(pooled > 0 && pooled <= streams, result.toString());
    // Dropped unclosed: Spring's own Cleaner thread ends (or pools) each one; all are the reader's
    // leaks, none stays open.
    assertEquals(
        BehaviourScenarios.DROPPED + " 0", result.value("dropped_scope"), result.toString());
  }

  @Test
  void jdkZipCacheAndApplicationPoolsHoldPooledNotOpenHandles() throws Exception {
    Result result = run("level=full", "jdk-pool");
    assertEquals("1", result.value("jdk_pooled"), result.toString());
    assertEquals("0", result.value("open_at_read_line"), result.toString());
    assertEquals("1", result.value("own_pooled"), result.toString());
    assertEquals("null", result.value("own_pool_scope"), result.toString());
    assertEquals("1", result.value("borrowed_open"), result.toString());
  }

  @Test
  void endedByAnyCleanerIsALeak() throws Exception {
    // 3 by a Cleaner of the application's own, 2 by the common cleaner; 1 ended by its owner.
    assertEquals("5 1 0", run("level=full", "cleaner").value("cleaner"));
  }

  /** frocksdbjni 6.20's finalizer frees leaked options, and the cache they retained with them. */
  @Test
  void finalizerReleasesTheRetainedCache() throws Exception {
    Path frocks6 = variant("frocksdbjni-6.20");
    Result result =
        new ScenarioJvm()
            .mainClass(SCENARIOS)
            .classpath(ScenarioJvm.codeSource(NestedJarFile.class).toString())
            .rocksdb(frocks6)
            .agent("level=full")
            .run("finalizer");
    assertEquals(0, result.exitCode(), result.toString());
    assertEquals("0", result.value("zombie_after"), result.toString());
    String site = result.value("options_site");
    assertTrue(site.startsWith("1 1 1 leaked (1 freed by the finalizer, last at "), site);
    assertTrue(site.contains(".finalizer" + FILE + result.value("leak_line") + ")"), site);
    assertTrue(result.value("json").contains("\"freed_by_finalizer\":1"), result.toString());

    // rocksdbjni 10 has no finalizer: the leaked options keep the cache alive natively.
    Result current = run("level=full", "finalizer");
    assertEquals("" + (16L << 20), current.value("zombie_after"), current.toString());
    assertEquals("" + (16L << 20), current.value("zombie_before"), current.toString());
  }

  /** A finalizer run by {@code System.runFinalization} (its own thread) still reports a leak. */
  @Test
  void runFinalizationsThreadStillReportsTheLeak() throws Exception {
    Result result =
        new ScenarioJvm()
            .mainClass(SCENARIOS)
            .classpath(ScenarioJvm.codeSource(NestedJarFile.class).toString())
            .rocksdb(variant("frocksdbjni-6.20"))
            .agent("level=full")
            .run("run-finalization");
    int leaks = BehaviourScenarios.RUN_FINALIZATION_LEAKS;
    assertEquals(0, result.exitCode(), result.toString());
    // created closed leaked open pooled
    assertEquals(leaks + " 0 " + leaks + " 0 0", result.value("options"), result.toString());
    assertEquals("" + leaks, result.value("freed_by_finalizer"), result.toString());
  }

  @Test
  void kindThatOwnsNothingIsNotTracked() throws Exception {
    Result result = run("level=full", "owns-nothing");
    assertEquals("null", result.value("failure"), result.toString());
    assertEquals("0", result.value("perf_context_created"), result.toString());
  }

  @ParameterizedTest
  @ValueSource(strings = {"", "level=counts"})
  void testScopeNamesTheLineWhateverTheLevel(String options) throws Exception {
    Result result = run(options, "test-scope");
    String failure = result.value("failure");
    assertTrue(
        failure.contains(
            "2 leaked ColumnFamilyOptions, created at "
                + SCENARIOS
                + ".testScope"
                + FILE
                + result.value("line")
                + ")"),
        failure);
    assertTrue(
        failure.contains(
            "1 open (never closed) Inflater, created at "
                + SCENARIOS
                + ".testScope"
                + FILE
                + result.value("inflater_line")
                + ")"),
        failure);
    if (!options.isEmpty()) {
      assertTrue(
          result
              .value("plain_failure")
              .contains(
                  "(creation stack not recorded: level=counts; use level=sampled or level=full,"
                      + " the agent argument or -Dnativemem.handles.level, to see sites)"),
          result.toString());
    }
  }

  /** The natural set-up: the agent on Surefire's argLine with no options. */
  @Test
  void junitExtensionNamesTheLineWithTheAgentWithoutOptions() throws Exception {
    Result result =
        new ScenarioJvm()
            .mainClass(FixtureRunner.class.getName())
            .classpath(JUNIT_EXTENSION.toString(), System.getProperty("java.class.path"))
            .agent("")
            .run();
    assertEquals(0, result.exitCode(), result.toString());
    String failure = result.value("failure");
    assertTrue(
        failure.contains(
            "7 leaked ColumnFamilyOptions, created at dev.nativemem.tests.handles.agent.LeakFixtures$LeaksOptions.leaks(LeakFixtures.java:"
                + result.value("line")
                + ")"),
        failure);
    assertFalse(failure.contains("not sampled"), failure);
    assertNotEquals("-1", result.value("line"));
  }

  private static Path variant(String prefix) throws Exception {
    Path variants = Paths.get(System.getProperty("nativemem.rocksdb.variants", "missing"));
    try (Stream<Path> jars = Files.list(variants)) {
      return jars.filter(p -> p.getFileName().toString().startsWith(prefix))
          .findFirst()
          .orElseThrow(() -> new AssertionError("no " + prefix + " jar in " + variants));
    }
  }
}
