package dev.nativemem.tests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.jr.ob.JSON;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** {@code java -jar nativemem.jar ...} as a user runs it. */
class CliTest {

  @Test
  void noArgumentsAndHelpPrintUsage() throws Exception {
    for (String[] args : new String[][] {{}, {"--help"}, {"help"}}) {
      ForkedJvm.Result r = new ForkedJvm().cli(args);
      assertEquals(0, r.exitCode, r.toString());
      assertTrue(r.stdout.startsWith("Usage: nativemem"), r.toString());
      for (String command : new String[] {"version", "stats", "demo", "help"}) {
        assertTrue(r.stdout.contains("  " + command + " "), command + " missing: " + r);
      }
    }
  }

  @Test
  void unknownCommandPrintsUsageToStderrAndExits2() throws Exception {
    ForkedJvm.Result r = new ForkedJvm().cli("frobnicate");
    assertEquals(2, r.exitCode, r.toString());
    assertTrue(r.stderr.contains("Unmatched argument at index 0: 'frobnicate'"), r.toString());
    assertTrue(r.stderr.contains("Usage: nativemem"), r.toString());
    assertEquals("", r.stdout);
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
    // A JVM that ran picocli and loaded a JNI library is resident for more than 16 MiB.
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
    ForkedJvm.Result r = new ForkedJvm().cli("demo");
    assertEquals(0, r.exitCode, r.toString());
    assertTrue(r.stdout.contains("Allocator serving malloc: glibc"), r.toString());
    assertTrue(r.stdout.matches("(?s).*RSS\\s+\\d+\\.\\d MiB.*"), r.toString());
  }

  @Test
  void versionMatchesTheJar() throws Exception {
    ForkedJvm.Result r = new ForkedJvm().cli("version", "--json");
    assertEquals(0, r.exitCode, r.toString());
    Map<String, Object> json = JSON.std.mapFrom(r.stdout);
    assertEquals(json.get("java"), json.get("native"));
    assertTrue(ForkedJvm.JAR.getFileName().toString().contains((String) json.get("java")));
  }
}
