package dev.nativemem.tests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.nativemem.profile.ProfileRequest;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Collectors;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Java frames above native allocations: Inflaters planted from known lines (an interpreted method,
 * a compiled one, a lambda) in a forked JVM are attributed to exactly those lines, as the JVM's own
 * stack traces name them, with the bytes the allocating thread kept (jemalloc's per-thread
 * counters) within sampling error; jeprof still reads the dump.
 */
class JavaFramesTest {
  private static final long INTERVAL = 32 * 1024;
  private static final int PER_SITE = 2_000;

  @BeforeAll
  static void preloadAllocator() throws Exception {
    HeapProfilingTest.extractPreloadAllocator();
  }

  @ParameterizedTest
  @EnumSource(HeapProfilingTest.Allocator.class)
  void plantedInflatersAreAttributedToTheirJavaLines(HeapProfilingTest.Allocator allocator)
      throws Exception {
    Path dump = HeapProfilingTest.freshDir("java-frames-" + allocator).resolve("sites.heap");
    String child = JavaFramesChild.class.getName();
    ForkedJvm jvm =
        HeapProfilingTest.jvm(allocator)
            .jvmArg(
                "-XX:CompileCommand=quiet",
                "-XX:CompileCommand=exclude," + child + "::plantInterpreted",
                "-XX:-BackgroundCompilation",
                "-XX:+PrintCompilation");
    ForkedJvm.Result r =
        jvm.main(child, "sites", dump.toString(), Long.toString(INTERVAL), "" + PER_SITE);
    assertEquals(0, r.exitCode, r.toString());
    assertEquals("true", HeapProfilingTest.line(r, "JAVA_FRAMES"), r.toString());
    // The JIT's own log: the compiled site was compiled, the interpreted one never.
    assertTrue(r.stdout.contains("JavaFramesChild::plantCompiled ("), r.stdout);
    assertFalse(r.stdout.contains("JavaFramesChild::plantInterpreted ("), r.stdout);

    ProfileRequest.Result analysis =
        ProfileRequest.of(dump).report().render(ProfileRequest.Format.COLLAPSED).run();
    List<String> collapsed =
        analysis.rendered(ProfileRequest.Format.COLLAPSED).lines().collect(Collectors.toList());
    for (String site : List.of("interpreted", "compiled", "lambda")) {
      String[] planted = HeapProfilingTest.line(r, "SITE " + site).split(" ");
      String frame = planted[0];
      long truth = Long.parseLong(planted[1]);
      List<String> stacks =
          collapsed.stream().filter(l -> l.contains(frame)).collect(Collectors.toList());
      assertFalse(stacks.isEmpty(), "no stack through " + frame + " in\n" + collapsed);
      for (String stack : stacks) {
        // The JDK's zlib glue (its own z_stream, then inflateInit2_) below the Java frames.
        int glue = stack.indexOf(";Java_java_util_zip_Inflater_init");
        assertTrue(glue > stack.indexOf(frame), "native frames below the Java ones: " + stack);
        assertTrue(stack.contains("java.util.zip.Inflater.<init>(Inflater.java:"), stack);
      }
      long profiled = stacks.stream().mapToLong(JavaFramesTest::bytesOf).sum();
      // Sampling error: about 1/sqrt(samples) relative; five of those.
      double samples = (double) truth / INTERVAL;
      double tolerance = 5 / Math.sqrt(samples);
      assertEquals(
          1.0,
          (double) profiled / truth,
          tolerance,
          site + ": profiled " + profiled + " bytes at " + frame + ", the thread kept " + truth);
    }

    // jeprof reads the same dump to the same total: the Java frames are only unknown addresses.
    String jeprof = HeapDump.jeprofText(dump);
    assertTrue(jeprof.contains("inflateInit2_"), jeprof);
    double totalMiB = analysis.report().totalBytes() / (double) (1 << 20);
    assertEquals(totalMiB, HeapDump.jeprofTotalMiB(jeprof), 0.051, jeprof);
    assertFalse(jeprof.contains("JavaFramesChild"), "jeprof cannot know Java names:\n" + jeprof);
  }

  @Test
  void theSettingTurnsJavaFramesOnAtStartAndTheyTurnOffAtRunTime() throws Exception {
    ForkedJvm.Result r =
        HeapProfilingTest.jvm(HeapProfilingTest.Allocator.DEBIAN)
            .jvmArg("-Dnativemem.profile.javaFrames=true")
            .main(JavaFramesChild.class.getName(), "setting");
    assertEquals(0, r.exitCode, r.toString());
    assertEquals("true", HeapProfilingTest.line(r, "RECORDING"), r.toString());
    assertEquals("false", HeapProfilingTest.line(r, "AFTER_OFF"), r.toString());
    // Off by default.
    ForkedJvm.Result plain =
        HeapProfilingTest.jvm(HeapProfilingTest.Allocator.DEBIAN)
            .main(JavaFramesChild.class.getName(), "setting");
    assertEquals("false", HeapProfilingTest.line(plain, "RECORDING"), plain.toString());
  }

  /**
   * Under the agent with its watch on, the setting turns Java frames on at the agent's start: dumps
   * carry them before the application ever calls nativemem.
   */
  @Test
  void theSettingTurnsJavaFramesOnAtTheAgentsStartWithTheWatchOn() throws Exception {
    Path incidents = HeapProfilingTest.freshDir("java-frames-agent");
    ForkedJvm.Result r =
        HeapProfilingTest.jvm(HeapProfilingTest.Allocator.OURS)
            .jvmArg(
                "-Dnativemem.profile.javaFrames=true",
                "-javaagent:" + ForkedJvm.JAR + "=watch=on,watch.dir=" + incidents)
            .main(JavaFramesChild.class.getName(), "agent");
    assertEquals(0, r.exitCode, r.toString());
    assertEquals("true", HeapProfilingTest.line(r, "RECORDING"), r.toString());
    // Without the setting the agent leaves them as they are: off.
    ForkedJvm.Result plain =
        HeapProfilingTest.jvm(HeapProfilingTest.Allocator.OURS)
            .jvmArg("-javaagent:" + ForkedJvm.JAR + "=watch=on,watch.dir=" + incidents)
            .main(JavaFramesChild.class.getName(), "agent");
    assertEquals("false", HeapProfilingTest.line(plain, "RECORDING"), plain.toString());
  }

  /** Without jemalloc the import-rewriting engine records Java frames itself. */
  @Test
  void withoutJemallocImportRewritingRecordsJavaFrames() throws Exception {
    ForkedJvm.Result r =
        new ForkedJvm()
            .classPath(HeapProfilingTest.testClasses())
            .main(JavaFramesChild.class.getName(), "glibc");
    assertEquals(0, r.exitCode, r.toString());
    assertEquals("none", HeapProfilingTest.line(r, "ERROR"), r.toString());
  }

  private static long bytesOf(String collapsedLine) {
    return Long.parseLong(collapsedLine.substring(collapsedLine.lastIndexOf(' ') + 1));
  }
}
