package dev.nativemem.tests.handles;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.nativemem.tests.handles.ScenarioJvm.Result;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

/** The agent in child JVMs: options, behaviour, concurrency, report file, RocksDB variants. */
class AgentJvmTest {
  private static final int LEAKS = 5;

  @TempDir Path dir;

  @Test
  void agentChangesNoBehaviour() throws Exception {
    Result plain = new ScenarioJvm().run("workload");
    Result traced = new ScenarioJvm().agent("level=full").run("workload");
    assertEquals(0, plain.exitCode(), plain.toString());
    assertEquals(0, traced.exitCode(), traced.toString());
    assertEquals(plain.stdout(), traced.stdout());
    assertTrue(Integer.parseInt(plain.value("count")) > 1000, plain.toString());
  }

  @Test
  void unknownOptionTurnsTheAgentOffAndTheApplicationRuns() throws Exception {
    Result result = new ScenarioJvm().agent("level=full,colour=blue").run("workload");
    assertEquals(0, result.exitCode(), result.toString());
    assertTrue(result.stderr().contains("unknown option 'colour'"), result.stderr());
    assertTrue(result.stderr().contains("the agent is off"), result.stderr());
    assertTrue(result.stdout().contains("digest "), result.toString());

    Result badLevel = new ScenarioJvm().agent("level=loud").run("workload");
    assertEquals(0, badLevel.exitCode(), badLevel.toString());
    assertTrue(badLevel.stderr().contains("level 'loud' is not one of"), badLevel.stderr());
  }

  @Test
  void includeLimitsTrackingToTheNamedKinds() throws Exception {
    Result result = new ScenarioJvm().agent("level=full,include=Statistics+zip").run("leaks", "3");
    assertEquals(0, result.exitCode(), result.toString());
    assertEquals("0", result.value("leaked_options"), result.toString());
    assertEquals("0", result.value("zombies"), result.toString());
    assertTrue(result.value("report_json").contains("\"kind\":\"Inflater\""), result.toString());
  }

  @Test
  void agentAttachedTwiceIsHarmless() throws Exception {
    Result result =
        new ScenarioJvm().agent("level=full").agent("level=counts").run("leaks", "" + LEAKS);
    assertEquals(0, result.exitCode(), result.toString());
    assertTrue(result.stderr().contains("already attached with level=full"), result.stderr());
    assertEquals("" + LEAKS, result.value("leaked_options"));
  }

  @Test
  void lateAttachRetransformsLoadedClasses() throws Exception {
    Result result =
        new ScenarioJvm()
            .jvmArg("-Djdk.attach.allowAttachSelf=true")
            .run("late-attach", ScenarioJvm.JAR.toString());
    assertEquals(0, result.exitCode(), result.toString());
    assertEquals("true", result.value("active"), result.toString());
    // Made before the attach: not counted. Made after: 3 leaked options and 1 leaked Inflater.
    assertEquals("3 3", result.value("options"), result.toString());
    assertEquals("1", result.value("inflaters_leaked"), result.toString());
    assertEquals("0", result.value("inflaters_closed"), result.toString());
    assertTrue(
        result
            .value("failure")
            .contains(
                "3 leaked ColumnFamilyOptions, created at "
                    + HandleScenarios.class.getName()
                    + ".lateAttach(HandleScenarios.java:"
                    + result.value("leak_line")
                    + ")"),
        result.toString());
  }

  @Test
  void sixteenThreadsGiveExactCounts() throws Exception {
    int threads = 16;
    int cycles = 100_000;
    Result result = new ScenarioJvm().agent("level=counts").run("churn", "" + threads, "" + cycles);
    assertEquals(0, result.exitCode(), result.toString());
    long total = (long) threads * cycles;
    assertEquals(
        "HandleScope 'churn': created "
            + total
            + ", closed "
            + total
            + ", transferred 0, open 0, leaked 0",
        result.value("scope"));
    assertEquals("none", result.value("failure"));
    assertEquals(total + " " + total + " 0 0 0", result.value("kind"));
  }

  /** Streams only counted (no record) still give exact figures, at each level that counts. */
  @ParameterizedTest
  @ValueSource(strings = {"counts", "sampled"})
  void countedZipStreamsGiveExactFigures(String level) throws Exception {
    int threads = 4;
    int cycles = 50_000;
    Result result =
        new ScenarioJvm().agent("level=" + level).run("zip-counts", "" + threads, "" + cycles);
    assertEquals(0, result.exitCode(), result.toString());
    long ended = (long) threads * cycles;
    String[] inflaters = result.value("Inflater").split(" ");
    long pooled = Long.parseLong(inflaters[4]); // by class loading meanwhile, if any
    assertEquals(
        (ended + HandleScenarios.ZIP_OPEN + pooled)
            + " "
            + ended
            + " "
            + HandleScenarios.ZIP_OPEN
            + " 0 "
            + pooled,
        result.value("Inflater"),
        result.toString());
    assertEquals(
        (ended + HandleScenarios.ZIP_LEAKED)
            + " "
            + ended
            + " 0 "
            + HandleScenarios.ZIP_LEAKED
            + " 0",
        result.value("Deflater"),
        result.toString());
  }

  @Test
  void reportFileAtExitIsPrivateAndNeverOverwritten() throws Exception {
    Path report = dir.resolve("handles.json");
    Result first = new ScenarioJvm().agent("level=full,report=" + report).run("workload");
    assertEquals(0, first.exitCode(), first.toString());
    assertTrue(Files.readString(report).contains("\"kinds\""), Files.readString(report));
    assertEquals("rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(report)));
    String before = Files.readString(report);
    Result second = new ScenarioJvm().agent("level=full,report=" + report).run("workload");
    assertTrue(second.stderr().contains("exists; wrote the handle report to"), second.stderr());
    assertEquals(before, Files.readString(report));
    try (Stream<Path> files = Files.list(dir)) {
      assertEquals(2, files.count());
    }
  }

  /** Where any user may replace files, the report could be swapped for a link: refused. */
  @Test
  void reportFileIsRefusedInADirectoryOthersCanSwapFilesIn() throws Exception {
    Path open = Files.createDirectory(dir.resolve("open"));
    Files.setPosixFilePermissions(open, PosixFilePermissions.fromString("rwxrwxrwx"));
    Result result =
        new ScenarioJvm().agent("level=full,report=" + open.resolve("r.json")).run("workload");
    assertEquals(0, result.exitCode(), result.toString());
    assertTrue(
        result.stderr().contains(open + " is writable by other users and not sticky"),
        result.stderr());
    assertTrue(
        result.stderr().contains("write the report into a directory only you can write"),
        result.stderr());
    try (Stream<Path> files = Files.list(open)) {
      assertEquals(0, files.count());
    }
  }

  /** A private directory inside one that others may write could be swapped for theirs: refused. */
  @Test
  void reportFileIsRefusedBelowADirectoryOthersCanSwapItIn() throws Exception {
    Path open = Files.createDirectory(dir.resolve("open-above"));
    Path inner = Files.createDirectory(open.resolve("inner"));
    Files.setPosixFilePermissions(open, PosixFilePermissions.fromString("rwxrwxrwx"));
    Result result =
        new ScenarioJvm().agent("level=full,report=" + inner.resolve("r.json")).run("workload");
    assertEquals(0, result.exitCode(), result.toString());
    assertTrue(
        result.stderr().contains(open + " is writable by other users and not sticky"),
        result.stderr());
    assertTrue(result.stderr().contains("swap " + inner.toRealPath()), result.stderr());
    try (Stream<Path> files = Files.list(inner)) {
      assertEquals(0, files.count());
    }
  }

  /** The CLI demo, started without the agent: it runs the incidents in a child JVM that has it. */
  @Test
  void demoShowsTheThreeIncidentsThenNoLeak() throws Exception {
    Result result =
        new ScenarioJvm()
            .mainClass("dev.nativemem.cli.NativeMemoryCli")
            .classpath(System.getProperty("nativemem.demo.jar", "missing-nativemem-demo.jar"))
            .run("demo");
    assertEquals(0, result.exitCode(), result.toString());
    String out = result.stdout();
    assertTrue(out.contains("3 leaked Statistics, created at"), out);
    assertTrue(out.contains("3 leaked ColumnFamilyOptions, created at"), out);
    assertTrue(out.contains("3 open (never closed) Inflater, created at"), out);
    assertTrue(
        out.contains("3 block caches closed in Java but alive natively: 96.0 MiB of capacity"),
        out);
    assertTrue(out.contains("no leak: HandleScope 'fixed'"), out);
  }

  static Stream<Arguments> rocksdbVariants() throws Exception {
    Path variants = Paths.get(System.getProperty("nativemem.rocksdb.variants", "missing"));
    Stream<Arguments> forks;
    try (Stream<Path> jars = Files.list(variants)) {
      forks =
          jars.filter(p -> p.toString().endsWith(".jar")).sorted().toList().stream()
              .map(p -> Arguments.of(p.getFileName().toString(), p));
    }
    return Stream.concat(
        Stream.of(Arguments.of("rocksdbjni", ScenarioJvm.codeSource(org.rocksdb.RocksDB.class))),
        forks);
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("rocksdbVariants")
  void leaksAndZombieCacheOnEachRocksDbVariant(String name, Path jar) throws Exception {
    Result result = new ScenarioJvm().rocksdb(jar).agent("level=full").run("leaks", "" + LEAKS);
    assertEquals(0, result.exitCode(), result.toString());
    assertEquals("" + LEAKS, result.value("leaked_options"), result.toString());
    assertTrue(result.value("failure_first_line").contains(LEAKS + " leaked"), result.toString());
    assertEquals("1", result.value("zombies"), result.toString());
    assertEquals("" + (24L << 20), result.value("zombie_capacity"));
    String retainer = result.value("zombie_retainer");
    assertTrue(
        retainer.contains("(HandleScenarios.java:" + result.value("retain_line") + ")"), retainer);
    assertFalse(result.stderr().contains("hook failed"), result.stderr());
  }

  /** Every static open, with one Options or with descriptors, on each RocksDB variant. */
  @ParameterizedTest(name = "{0}")
  @MethodSource("rocksdbVariants")
  void defaultFamilyRetentionOnEachRocksDbVariant(String name, Path jar) throws Exception {
    Result result = new ScenarioJvm().rocksdb(jar).agent("level=full").run("default-family");
    assertEquals(0, result.exitCode(), result.toString());
    // frocksdbjni 8.10's TtlDB, and its OptimisticTransactionDB opened with one Options, keep no
    // default family handle: getDefaultColumnFamily() is null, only the list's handle is there.
    boolean noDefaultHandle = name.startsWith("frocksdbjni-8.10.");
    for (String open : DatabaseOpens.retentions().keySet()) {
      String expected = open.startsWith("families:") ? "2/2" : "1/1";
      if (noDefaultHandle && open.equals("families:TtlDB.open")) {
        expected = "1/1";
      } else if (noDefaultHandle
          && (open.equals("options:TtlDB.open") || open.startsWith("options:Optimistic"))) {
        expected = "unreachable";
      }
      assertEquals(expected, result.value(open), result.toString());
    }
    assertFalse(result.stderr().contains("hook failed"), result.stderr());
  }

  /**
   * level=sampled (the default) names the line of every leak of a rare kind: six
   * ColumnFamilyOptions leaked a few a second, each among 500 ReadOptions created on the same
   * thread, all at their line, where one stack in 128 per thread would record about none.
   */
  @Test
  void sampledLevelNamesTheLineOfEveryRareLeak() throws Exception {
    Result result = new ScenarioJvm().agent("").run("rare-among-hot", "6", "500");
    assertEquals(0, result.exitCode(), result.toString());
    assertEquals("6", result.value("rare_leaked"), "the collector found the six: " + result);
    assertEquals("6", result.value("rare_leaked_at_line"), result.toString());
  }
}
