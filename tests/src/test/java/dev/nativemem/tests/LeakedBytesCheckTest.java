package dev.nativemem.tests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The JUnit extension's check of leaked native bytes, in a child JVM as Surefire starts one: the
 * agent on the command line and a profiling allocator preloaded (the bundled one, or Debian's
 * jemalloc, profiling ready and inactive). A class keeping 2,000 used Deflaters fails naming its
 * line, {@code deflateInit2_} and the bytes within 10% of what jemalloc's own per-thread counters
 * say the loop kept; a class that ends them and a class that only makes the JVM load classes, link
 * lambdas, intern and compile pass with a limit of 0 bytes, though the JVM did allocate under their
 * frames.
 */
class LeakedBytesCheckTest {
  /** This build's extension, ahead of anything on the test class path. */
  /** The JUnit extension's classes, as the build left them. */
  static final Path JUNIT_EXTENSION =
      ForkedJvm.BUILT_JAR
          .toAbsolutePath()
          .getParent()
          .getParent()
          .getParent()
          .resolve("nativemem-junit/target/classes");

  private static final Pattern BYTES = Pattern.compile("\\((\\d+) bytes\\) allocated at ([^ ]+)");

  @BeforeAll
  static void preloadAllocator() throws Exception {
    HeapProfilingTest.extractPreloadAllocator();
  }

  @ParameterizedTest
  @EnumSource(HeapProfilingTest.Allocator.class)
  void leakedDeflatersFailNamingLineAndBytesWhileEndedOnesAndTheJvmsChurnPass(
      HeapProfilingTest.Allocator allocator) throws Exception {
    // One sample per 16 KiB, so the JVM's churn under the classes' frames is seen.
    String sampling = "lg_prof_sample:14";
    ForkedJvm.Result r =
        HeapProfilingTest.jvm(allocator)
            .env(
                "MALLOC_CONF",
                allocator == HeapProfilingTest.Allocator.OURS
                    ? sampling
                    : HeapProfilingTest.READY + "," + sampling)
            .jvmArg("-javaagent:" + ForkedJvm.JAR)
            .classPath(JUNIT_EXTENSION)
            .classPath(Path.of(System.getProperty("java.class.path")))
            .main(LeakedBytesRunner.class.getName());
    assertEquals(0, r.exitCode, r.toString());
    System.out.println(r.stdout.replace(" | ", "\n"));

    String leaks = HeapProfilingTest.line(r, "RESULT LeaksDeflaters");
    String site = leakSite(r);
    long truth = Long.parseLong(HeapProfilingTest.line(r, "TRUTH"));
    assertTrue(truth > LeakedBytesFixtures.DEFLATERS * 200_000L, r.toString());
    long reported = reportedAt(leaks, site);
    assertEquals(1.0, (double) reported / truth, 0.10, "reported " + reported + ", kept " + truth);
    // The native stack below the line, leaf first: zlib's allocation through the JDK's glue.
    int header = leaks.indexOf("allocated at " + site);
    int zlib = leaks.indexOf("at deflateInit2_", header);
    assertTrue(zlib > header, leaks);
    assertTrue(
        leaks.indexOf("at java.util.zip.Deflater.init(Native Method)", header) > zlib, leaks);
    // Leaked handles are named too (the agent), in the same failure.
    assertTrue(leaks.startsWith("NativeLeakError: native handles leaked in"), leaks);

    assertEquals("passed", HeapProfilingTest.line(r, "RESULT EndsDeflaters"), r.toString());
    // Per method: the method that keeps its Deflaters fails, the one that ends them passes.
    String perMethod = HeapProfilingTest.line(r, "RESULT PerMethod");
    assertEquals("1", HeapProfilingTest.line(r, "FAILED_TESTS PerMethod"), r.toString());
    assertTrue(
        perMethod.contains(
            "native memory left live by '"
                + LeakedBytesFixtures.PerMethod.class.getName()
                + "#keeps()': "),
        perMethod);
    assertEquals("passed", HeapProfilingTest.line(r, "RESULT JvmChurn"), r.toString());
    // The JVM did allocate under the churning class's frames: the check left those out.
    assertTrue(Long.parseLong(HeapProfilingTest.line(r, "UNDER_CHURN")) > 0, r.toString());
  }

  /**
   * Deflaters dropped without {@code end()} are ended by the JDK's cleaner after a GC: the check
   * waits for it, so no byte is left (without the agent, which would report the handles).
   */
  @Test
  void droppedDeflatersAreEndedByTheCleanerBeforeTheCheck() throws Exception {
    ForkedJvm.Result r =
        HeapProfilingTest.jvm(HeapProfilingTest.Allocator.OURS)
            .jvmArg("-Dnativemem.junit.requireAgent=false")
            .classPath(JUNIT_EXTENSION)
            .classPath(Path.of(System.getProperty("java.class.path")))
            .main(LeakedBytesRunner.class.getName(), "DropsDeflaters");
    assertEquals(0, r.exitCode, r.toString());
    assertEquals("passed", HeapProfilingTest.line(r, "RESULT DropsDeflaters"), r.toString());
  }

  /**
   * On glibc's malloc, without LD_PRELOAD, import rewriting samples instead: the class keeping
   * 2,000 used Deflaters fails naming its line, {@code deflateInit2_} and its bytes (each keeps
   * zlib's deflate state, over 200,000 bytes: the same floor as under jemalloc), and the classes
   * that end them or only churn the JVM pass.
   */
  @Test
  void onGlibcImportRewritingChecksTheBytes() throws Exception {
    ForkedJvm.Result r =
        new ForkedJvm()
            .withTestClasses()
            .jvmArg("-javaagent:" + ForkedJvm.JAR)
            .classPath(JUNIT_EXTENSION)
            .classPath(Path.of(System.getProperty("java.class.path")))
            .main(LeakedBytesRunner.class.getName());
    assertEquals(0, r.exitCode, r.toString());
    String leaks = HeapProfilingTest.line(r, "RESULT LeaksDeflaters");
    String site = leakSite(r);
    long reported = reportedAt(leaks, site);
    assertTrue(reported > LeakedBytesFixtures.DEFLATERS * 200_000L, leaks);
    assertTrue(leaks.indexOf("at deflateInit2_", leaks.indexOf("allocated at " + site)) > 0, leaks);
    assertEquals("passed", HeapProfilingTest.line(r, "RESULT EndsDeflaters"), r.toString());
    assertEquals("passed", HeapProfilingTest.line(r, "RESULT JvmChurn"), r.toString());
  }

  /** The planted line, as the failure names it. */
  private static String leakSite(ForkedJvm.Result r) {
    return LeakedBytesFixtures.LeaksDeflaters.class.getName()
        + ".leaks(LeakedBytesFixtures.java:"
        + HeapProfilingTest.line(r, "LINE")
        + ")";
  }

  /** The bytes the failure reports at {@code site}, its first site. */
  private static long reportedAt(String leaks, String site) {
    Matcher bytes = BYTES.matcher(leaks);
    assertTrue(bytes.find(), leaks);
    assertEquals(site, bytes.group(2), leaks);
    return Long.parseLong(bytes.group(1));
  }
}
