package dev.nativemem.tests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.jr.ob.JSON;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.Map;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

/** {@code java -jar nativemem.jar ...} as a user runs it. */
class CliTest {
  /** What a user types: there is no {@code nativemem} launcher, the jar is the program. */
  private static final String LAUNCHER = "java -jar " + ForkedJvm.JAR.getFileName();

  /** Every command that writes a file takes the same option for it. */
  @Test
  void everyCommandThatWritesAFileTakesDashOOutput() throws Exception {
    for (String command : new String[] {"analyze", "incident"}) {
      ForkedJvm.Result r = new ForkedJvm().cli(command, "--help");
      assertEquals(0, r.exitCode, r.toString());
      assertTrue(r.stdout.contains("-o,--output <FILE>"), command + ": " + r);
    }
  }

  /** The analysis was called {@code report}: that name still runs it, and says the new one. */
  @Test
  void theOldNameOfAnalyzeStillRunsIt() throws Exception {
    ForkedJvm.Result r = new ForkedJvm().cli("report", "--help");
    assertEquals(0, r.exitCode, r.toString());
    assertTrue(r.stdout.startsWith("usage: " + LAUNCHER + " analyze"), r.toString());
    assertTrue(r.stderr.contains("'report' is now called 'analyze'"), r.toString());
  }

  @Test
  void noArgumentsAndHelpPrintUsage() throws Exception {
    for (String[] args : new String[][] {{}, {"--help"}, {"help"}}) {
      ForkedJvm.Result r = new ForkedJvm().cli(args);
      assertEquals(0, r.exitCode, r.toString());
      assertTrue(r.stdout.startsWith("Usage: " + LAUNCHER + " "), r.toString());
      for (String command : new String[] {"version", "stats", "demo", "help"}) {
        assertTrue(r.stdout.contains("  " + command + " "), command + " missing: " + r);
      }
    }
  }

  @Test
  void unknownCommandPrintsUsageToStderrAndExits2() throws Exception {
    ForkedJvm.Result r = new ForkedJvm().cli("frobnicate");
    assertEquals(2, r.exitCode, r.toString());
    assertTrue(r.stderr.contains("unknown command 'frobnicate'"), r.toString());
    assertTrue(r.stderr.contains("Usage: " + LAUNCHER + " "), r.toString());
    assertEquals("", r.stdout);
  }

  /** {@code COMMAND --help} and {@code help COMMAND}: the command's usage on stdout, exit 0. */
  @Test
  void everyCommandHasHelpThatExitsZero() throws Exception {
    for (String command :
        new String[] {
          "version", "stats", "breakdown", "advice", "demo", "env", "analyze", "incident"
        }) {
      for (String[] args : new String[][] {{command, "--help"}, {"help", command}}) {
        ForkedJvm.Result r = new ForkedJvm().cli(args);
        assertEquals(0, r.exitCode, r.toString());
        assertTrue(r.stdout.startsWith("usage: " + LAUNCHER + " " + command), r.toString());
        assertTrue(r.stdout.contains("--help"), r.toString());
      }
    }
  }

  @Test
  void badOptionsAreUsageErrorsThatSayWhatIsWrong() throws Exception {
    assertUsageError("Unrecognized option: --frobnicate", "analyze", "--frobnicate", "x.heap");
    assertUsageError("missing the <dump> to analyse", "analyze");
    assertUsageError("--top takes a whole number, got 'ten'", "analyze", "--top", "ten", "x.heap");
    assertUsageError("--format must be one of text, svg, pprof", "analyze", "--format", "gif", "x");
    assertUsageError("--cpus must be from 1 to 1023", "env", "--cpus", "536870912");
    assertUsageError("no command 'frobnicate'", "help", "frobnicate");
    assertUsageError("expected one bundle directory, got []", "incident");
  }

  private static void assertUsageError(String message, String... args) throws Exception {
    ForkedJvm.Result r = new ForkedJvm().cli(args);
    assertEquals(2, r.exitCode, r.toString());
    assertTrue(r.stderr.contains(message), message + " missing: " + r);
    assertTrue(
        r.stderr
            .toLowerCase(java.util.Locale.ROOT)
            .contains("usage: " + LAUNCHER.toLowerCase(java.util.Locale.ROOT)),
        r.toString());
    assertEquals("", r.stdout);
  }

  /**
   * JDK 24+ warns about {@code System.load} unless native access is enabled: the jar's manifest
   * enables it for itself. Run from the class path instead (no manifest), the same command warns,
   * which shows the check can fail.
   */
  @Test
  void noRestrictedMethodWarningOnJdk25() throws Exception {
    Path jdk25 =
        Paths.get(
            System.getProperty("nativemem.jdk25", "/usr/lib/jvm/temurin-25-jdk-amd64"),
            "bin",
            "java");
    Assumptions.assumeTrue(Files.isExecutable(jdk25), "no JDK 25 at " + jdk25);
    ForkedJvm.Result jar = new ForkedJvm().java(jdk25).cli("version");
    assertEquals(0, jar.exitCode, jar.toString());
    assertEquals("", jar.stderr, "java -jar ... version on JDK 25 printed warnings");
    ForkedJvm.Result classPath =
        new ForkedJvm().java(jdk25).main("dev.nativemem.cli.NativeMemoryCli", "version");
    assertEquals(0, classPath.exitCode, classPath.toString());
    assertTrue(classPath.stderr.contains("restricted method"), classPath.toString());
  }

  /**
   * The settings set are told once as the library loads, through System.Logger (java.util.logging
   * prints its level), a misspelled one as a warning; under the agent, which runs before the
   * application configures logging, plainly on standard error. Nothing at the defaults: see {@link
   * #noRestrictedMethodWarningOnJdk25}, whose standard error stays empty.
   */
  @Test
  void settingsSetAreToldOnceWhenTheLibraryLoads() throws Exception {
    String told = "nativemem settings: nativemem.profile.keep=4 (others default)";
    String typo = "nativemem: ignoring nativemem.handles.levle, which no setting reads";
    ForkedJvm.Result app =
        new ForkedJvm()
            .jvmArg("-Dnativemem.profile.keep=4", "-Dnativemem.handles.levle=full")
            .cli("version");
    assertEquals(0, app.exitCode, app.toString());
    assertTrue(app.stderr.contains("INFO: " + told), app.toString());
    assertEquals(app.stderr.indexOf(told), app.stderr.lastIndexOf(told), "told once");
    assertTrue(app.stderr.contains("WARNING: " + typo), app.toString());
    ForkedJvm.Result agent =
        new ForkedJvm()
            .jvmArg("-javaagent:" + ForkedJvm.JAR + "=level=counts", "-Dnativemem.profile.keep=4")
            .cli("version");
    assertEquals(0, agent.exitCode, agent.toString());
    assertTrue(agent.stderr.contains(told + "\n"), agent.toString());
    assertFalse(agent.stderr.contains("INFO: "), "not through java.util.logging: " + agent);
    assertEquals(agent.stderr.indexOf(told), agent.stderr.lastIndexOf(told), "told once");
  }

  @Test
  void statsJsonParsesAndNamesGlibc() throws Exception {
    ForkedJvm.Result r = new ForkedJvm().cli("stats", "--json");
    assertEquals(0, r.exitCode, r.toString());
    Map<String, Object> json = JSON.std.mapFrom(r.stdout);
    @SuppressWarnings("unchecked")
    Map<String, Object> allocator = (Map<String, Object>) json.get("allocator");
    @SuppressWarnings("unchecked")
    Map<String, Object> process = (Map<String, Object>) json.get("process");
    assertEquals("glibc", allocator.get("kind"), r.stdout);
    assertTrue(((String) allocator.get("malloc_object")).contains("libc.so"), r.stdout);
    long rss = ((Number) process.get("rss_bytes")).longValue();
    // A JVM that parsed its options and loaded a JNI library is resident for more than 16 MiB.
    assertTrue(rss > (16L << 20) && rss < (8L << 30), r.stdout);
  }

  @Test
  void statsUnderPreloadedDebianJemallocReportsIt() throws Exception {
    org.junit.jupiter.api.Assumptions.assumeTrue(
        java.nio.file.Files.exists(ForkedJvm.DEBIAN_JEMALLOC),
        "libjemalloc2 is not installed (.ci/run installs it)");
    ForkedJvm.Result r =
        new ForkedJvm().env("LD_PRELOAD", ForkedJvm.DEBIAN_JEMALLOC.toString()).cli("stats");
    assertEquals(0, r.exitCode, r.toString());
    assertTrue(r.stdout.contains("allocator  jemalloc 5."), r.toString());
    assertTrue(r.stdout.contains("libjemalloc.so.2"), r.toString());
  }

  @Test
  void demoPrintsAllocatorAndResidentMemory() throws Exception {
    ForkedJvm.Result r = new ForkedJvm().jar(ForkedJvm.DEMO_JAR, "demo");
    assertEquals(0, r.exitCode, r.toString());
    assertTrue(r.stdout.contains("Allocator serving malloc: glibc"), r.toString());
    assertTrue(r.stdout.matches("(?s).*RSS\\s+\\d+\\.\\d MiB.*"), r.toString());
  }

  @Test
  void versionMatchesTheJar() throws Exception {
    ForkedJvm.Result r = new ForkedJvm().cli("version", "--json");
    assertEquals(0, r.exitCode, r.toString());
    Map<String, Object> json = JSON.std.mapFrom(r.stdout);
    assertEquals(json.get("java"), json.get("native_library"));
    assertTrue(ForkedJvm.JAR.getFileName().toString().contains((String) json.get("java")));
    // The Java runtime it runs on, as that runtime names itself (the child runs this JVM's java).
    assertEquals(System.getProperty("java.runtime.version"), json.get("java_runtime"), r.stdout);
    ForkedJvm.Result text = new ForkedJvm().cli("version");
    assertTrue(
        text.stdout.contains("Java " + System.getProperty("java.runtime.version") + " ("),
        text.stdout);
  }
}
