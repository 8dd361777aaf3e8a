package dev.nativemem.tests;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.jar.JarFile;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** {@code libnativemem_jemalloc.so} preloaded into forked JVMs. */
class PreloadAllocatorTest {
  /** Where cgroup v1's cpu controller is mounted, from mountinfo; null if it is not. */
  static Path cgroupV1Cpu() throws IOException {
    for (String line : Files.readAllLines(Paths.get("/proc/self/mountinfo"))) {
      String[] halves = line.split(" - ", 2);
      String[] after = halves.length == 2 ? halves[1].split(" ") : new String[0];
      if (after.length >= 3
          && after[0].equals("cgroup")
          && java.util.Arrays.asList(after[2].split(",")).contains("cpu")) {
        return Paths.get(halves[0].split(" ")[4]);
      }
    }
    return null;
  }

  @BeforeAll
  static void extract() throws Exception {
    HeapProfilingTest.extractPreloadAllocator();
  }

  static ForkedJvm.Result mallctl(ForkedJvm jvm, String... keys) throws Exception {
    String[] args = new String[keys.length + 1];
    args[0] = "mallctl";
    System.arraycopy(keys, 0, args, 1, keys.length);
    return HeapProfilingTest.child(jvm, args);
  }

  static long value(ForkedJvm.Result r, String key) {
    return Long.parseLong(
        r.stdout
            .lines()
            .filter(l -> l.startsWith(key + "="))
            .map(l -> l.substring(key.length() + 1))
            .findFirst()
            .orElseThrow(() -> new AssertionError("no " + key + " in " + r)));
  }

  /** jemalloc's rule applied to the JVM's own container-aware CPU count. */
  static long narenasFor(long cpus) {
    return cpus > 1 ? 4 * cpus : 1;
  }

  @Test
  void defaultsAreProfilingReadyAndSizedForTheJvmsCpuCount() throws Exception {
    ForkedJvm.Result r =
        mallctl(
            HeapProfilingTest.jvm(HeapProfilingTest.Allocator.OURS),
            "opt.prof",
            "opt.prof_active",
            "prof.active",
            "opt.narenas",
            "opt.dirty_decay_ms",
            "opt.muzzy_decay_ms",
            "opt.background_thread",
            "opt.lg_prof_sample");
    assertEquals(1, value(r, "opt.prof"), r.toString());
    assertEquals(0, value(r, "opt.prof_active"));
    assertEquals(0, value(r, "prof.active"));
    assertEquals(narenasFor(value(r, "cpus")), value(r, "opt.narenas"), r.toString());
    assertEquals(1000, value(r, "opt.dirty_decay_ms"));
    assertEquals(0, value(r, "opt.muzzy_decay_ms"));
    assertEquals(1, value(r, "opt.background_thread"));
    assertEquals(19, value(r, "opt.lg_prof_sample"));
  }

  @Test
  void mallocConfIsHonouredAndOverridesTheDefaults() throws Exception {
    ForkedJvm.Result r =
        mallctl(
            HeapProfilingTest.jvm(HeapProfilingTest.Allocator.OURS)
                .env("MALLOC_CONF", "narenas:3,prof_active:true,dirty_decay_ms:2500"),
            "opt.narenas",
            "opt.prof_active",
            "prof.active",
            "opt.dirty_decay_ms",
            "opt.prof");
    assertEquals(3, value(r, "opt.narenas"), r.toString());
    assertEquals(1, value(r, "opt.prof_active"));
    assertEquals(1, value(r, "prof.active"));
    assertEquals(2500, value(r, "opt.dirty_decay_ms"));
    assertEquals(1, value(r, "opt.prof"), "defaults not overridden stay");
  }

  @Test
  void narenasFollowsACgroupCpuQuota() throws Exception {
    Path controller = cgroupV1Cpu();
    assumeTrue(controller != null, "no cgroup v1 cpu controller is mounted");
    Path group = controller.resolve("nativemem-test-" + ProcessHandle.current().pid());
    try {
      Files.createDirectory(group);
      Files.writeString(group.resolve("cpu.cfs_period_us"), "100000");
      Files.writeString(group.resolve("cpu.cfs_quota_us"), "100000");
    } catch (IOException | UnsupportedOperationException e) {
      assumeTrue(false, "cannot create a v1 CPU cgroup at " + group + " (" + e + "): not root?");
    }
    try {
      ForkedJvm jvm =
          HeapProfilingTest.jvm(HeapProfilingTest.Allocator.OURS)
              .launcher(
                  "sh",
                  "-c",
                  "echo $$ > " + group.resolve("cgroup.procs") + " && exec \"$@\"",
                  "sh");
      ForkedJvm.Result limited = mallctl(jvm, "opt.narenas");
      assertEquals(1, value(limited, "cpus"), "the JVM sees one CPU: " + limited);
      assertEquals(1, value(limited, "opt.narenas"), "jemalloc's rule for one CPU");

      Files.writeString(group.resolve("cpu.cfs_quota_us"), "150000");
      ForkedJvm.Result oneAndHalf = mallctl(jvm, "opt.narenas");
      long cpus = value(oneAndHalf, "cpus");
      assertEquals(Math.min(2, Runtime.getRuntime().availableProcessors()), cpus);
      assertEquals(narenasFor(cpus), value(oneAndHalf, "opt.narenas"), oneAndHalf.toString());
    } finally {
      Files.deleteIfExists(group);
    }
  }

  @Test
  void survivesTwentySecondsOfTogglingDumpingSpawningAndGc() throws Exception {
    Path dir = HeapProfilingTest.freshDir("stress");
    ForkedJvm.Result r =
        HeapProfilingTest.child(
            // fork() rather than the default posix_spawn: the child runs code between fork and
            // exec, which is where an allocator's fork handlers matter.
            HeapProfilingTest.jvm(HeapProfilingTest.Allocator.OURS)
                .jvmArg("-Djdk.lang.Process.launchMechanism=FORK"),
            "stress",
            "20",
            dir.toString());
    assertEquals("0", HeapProfilingTest.line(r, "FAILURES"), r.toString());
    assertTrue(!r.stdout.contains("STUCK"), r.toString());
    assertTrue(
        Long.parseLong(HeapProfilingTest.line(r, "TOGGLES")) >= HeapProfilingChild.STRESS_TOGGLES,
        r.toString());
    assertTrue(
        Long.parseLong(HeapProfilingTest.line(r, "DUMPS")) >= HeapProfilingChild.STRESS_DUMPS,
        r.toString());
    assertTrue(
        Long.parseLong(HeapProfilingTest.line(r, "SPAWNS")) >= HeapProfilingChild.STRESS_SPAWNS,
        r.toString());
    assertTrue(
        Long.parseLong(HeapProfilingTest.line(r, "ALLOCATIONS"))
            >= HeapProfilingChild.STRESS_ALLOCATIONS,
        r.toString());
  }

  @Test
  void envExtractsTheJarsAllocatorAndPrintsShellAndDockerfileLines() throws Exception {
    Path dir = HeapProfilingTest.freshDir("env");
    ForkedJvm.Result r = new ForkedJvm().cli("env", "--dir", dir.toString(), "--cpus", "3");
    assertEquals(0, r.exitCode, r.toString());
    Path library = dir.resolve("libnativemem_jemalloc.so");
    try (JarFile jar = new JarFile(ForkedJvm.JAR.toFile());
        InputStream in =
            jar.getInputStream(
                jar.getEntry("dev/nativemem/native/linux-x86_64/libnativemem_jemalloc.so"))) {
      assertArrayEquals(in.readAllBytes(), Files.readAllBytes(library));
    }
    assertTrue(r.stdout.contains("\nexport LD_PRELOAD=" + library + "\n"), r.stdout);
    assertTrue(r.stdout.contains("\nexport MALLOC_CONF=narenas:12\n"), r.stdout);
    assertTrue(r.stdout.contains("\nENV LD_PRELOAD=" + library + "\n"), r.stdout);
    assertTrue(r.stdout.contains("\nENV MALLOC_CONF=narenas:12\n"), r.stdout);
    assertTrue(r.stdout.contains("prof:true,prof_active:false"), r.stdout);

    ForkedJvm.Result plain = new ForkedJvm().cli("env", "--dir", dir.toString());
    assertEquals(0, plain.exitCode, plain.toString());
    assertTrue(!plain.stdout.contains("MALLOC_CONF="), "no --cpus, no MALLOC_CONF: " + plain);

    ForkedJvm.Result bad = new ForkedJvm().cli("env", "--dir", dir.toString(), "--cpus", "0");
    assertEquals(2, bad.exitCode, bad.toString());
    assertTrue(
        bad.stderr.startsWith(
            "nativemem env: --cpus must be from 1 to 1023 (4 arenas per CPU, and jemalloc allows"
                + " at most 4094), got 0\n"),
        bad.stderr);
  }

  /**
   * The demo on plain glibc profiles its workload in its own JVM (import rewriting), with no child
   * JVM under the preload allocator.
   */
  @Test
  void demoProfilesItsWorkloadOnPlainGlibc() throws Exception {
    Path dir = HeapProfilingTest.freshDir("demo");
    ForkedJvm.Result r =
        new ForkedJvm().jvmArg("-Dnativemem.profile.dir=" + dir).jar(ForkedJvm.DEMO_JAR, "demo");
    assertEquals(0, r.exitCode, r.toString());
    assertTrue(r.stdout.contains("allocator: glibc"), r.stdout);
    assertTrue(!r.stdout.contains("runs this part again in a child JVM"), r.stdout);
    assertTrue(r.stdout.contains("profiling started"), r.stdout);
    Path dump =
        Files.list(dir)
            .filter(p -> p.toString().endsWith(".heap"))
            .findFirst()
            .orElseThrow(() -> new AssertionError("no dump in " + dir + ": " + r));
    assertTrue(r.stdout.contains("    " + dump + "\n"), r.stdout);
    assertTrue(HeapDump.jeprofText(dump).contains("inflateInit2_"));
    // The demo's own analysis (no jeprof) names the same site and draws the flame graph.
    assertTrue(r.stdout.contains("analysed in this JVM"), r.stdout);
    assertTrue(r.stdout.matches("(?s).*analysed in this JVM.*inflateInit2_.*"), r.stdout);
    Path svg = Paths.get(dump + ".svg");
    assertTrue(r.stdout.contains("live native memory: " + svg + "\n"), r.stdout);
    assertTrue(new String(Files.readAllBytes(svg), "UTF-8").contains("<svg"), svg.toString());
  }
}
