package dev.nativemem.tests;

import static dev.nativemem.tests.AllocatorTruthTest.assertPartsAddUp;
import static dev.nativemem.tests.AllocatorTruthTest.number;
import static dev.nativemem.tests.AllocatorTruthTest.object;
import static dev.nativemem.tests.AllocatorTruthTest.probe;
import static dev.nativemem.tests.BreakdownTruthTest.advice;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

/**
 * One real run in a child of this test's own cgroup v1 memory (and CPU) cgroup: the limit we write
 * is the limit nativemem reports, and a CPU quota of one CPU makes jemalloc's host-sized arenas
 * show up as advice.
 */
class ChildCgroupTest {
  static final long LIMIT = 768L << 20;

  @Test
  void limitWrittenIsLimitReportedAndArenasAreAdvisedForTheQuota() throws Exception {
    String name = "nativemem-test-" + ProcessHandle.current().pid() + "-" + System.nanoTime();
    Path memory = childCgroup("memory", name);
    Path cpu = childCgroup("cpu", name);
    try {
      write(memory.resolve("memory.limit_in_bytes"), String.valueOf(LIMIT));
      write(cpu.resolve("cpu.cfs_period_us"), "100000");
      write(cpu.resolve("cpu.cfs_quota_us"), "100000");
      String join =
          "echo $$ > "
              + memory.resolve("cgroup.procs")
              + " && echo $$ > "
              + cpu.resolve("cgroup.procs")
              + " && exec \"$0\" \"$@\"";
      ForkedJvm jvm = AllocatorSetup.jemallocs().findFirst().orElseThrow().jvm();
      Map<String, Object> r = probe(jvm.launcher("sh", "-c", join), "views");

      Map<String, Object> breakdown = object(r, "breakdown");
      Map<String, Object> container = object(breakdown, "container");
      assertEquals("v1", container.get("cgroup_version"), container.toString());
      assertTrue(((String) container.get("cgroup")).endsWith("/" + name), container.toString());
      assertEquals(LIMIT, number(container, "limit_bytes"), container.toString());
      assertTrue(((String) container.get("limit_cgroup")).endsWith("/" + name), "" + container);
      long usage = number(container, "usage_bytes");
      long anon = number(object(breakdown, "process"), "rss_anon_bytes");
      assertTrue(usage <= LIMIT && usage >= anon * 9 / 10, usage + " vs anon " + anon);
      assertEquals(LIMIT - usage, number(breakdown, "headroom_bytes"));
      assertPartsAddUp(breakdown);

      // The JVM itself sees one CPU; so does nativemem; jemalloc sized arenas for the host.
      assertEquals(1, number(r, "available_processors"));
      assertEquals(1, number(object(breakdown, "cpus"), "effective"));
      long optNarenas = number(object(object(r, "allocator"), "jemalloc"), "opt_narenas");
      if (optNarenas > 4) {
        Map<String, Object> a = advice(r, "JEMALLOC_ARENAS_EXCEED_CPUS");
        assertEquals("MALLOC_CONF=narenas:4", a.get("suggested_setting"));
      }

      // The table a person reads: the limit is 100 % of itself, RSS a share of it.
      ForkedJvm.Result table =
          AllocatorSetup.jemallocs()
              .findFirst()
              .orElseThrow()
              .jvm()
              .launcher("sh", "-c", join)
              .cli("breakdown");
      assertEquals(0, table.exitCode, table.toString());
      assertTrue(
          table.stdout.matches("(?s).*\\n  limit \\(set at /\\S+\\) +768\\.0 MiB +100\\.0%\\n.*"),
          table.stdout);
      assertTrue(
          table.stdout.matches("(?s).*\\n  RSS +\\d+\\.\\d MiB +\\d+\\.\\d%\\n.*"), table.stdout);
    } finally {
      Files.deleteIfExists(memory);
      Files.deleteIfExists(cpu);
    }
  }

  /** Creates a child of this process's v1 cgroup for {@code controller}, or skips saying why. */
  static Path childCgroup(String controller, String name) throws IOException {
    String own = null;
    for (String line : Files.readAllLines(Paths.get("/proc/self/cgroup"), StandardCharsets.UTF_8)) {
      String[] parts = line.split(":", 3);
      if (parts.length == 3 && List.of(parts[1].split(",")).contains(controller)) {
        own = parts[2];
      }
    }
    Assumptions.assumeTrue(own != null, "no cgroup v1 '" + controller + "' controller here");
    Path mount = v1Mount(controller);
    Assumptions.assumeTrue(mount != null, "cgroup v1 '" + controller + "' is not mounted");
    Path child = mount.resolve(own.substring(1)).resolve(name);
    try {
      Files.createDirectory(child);
    } catch (IOException e) {
      Assumptions.abort("cannot create a child cgroup " + child + " (needs root): " + e);
    }
    return child;
  }

  static Path v1Mount(String controller) throws IOException {
    List<Path> found = new ArrayList<>();
    for (String line :
        Files.readAllLines(Paths.get("/proc/self/mountinfo"), StandardCharsets.UTF_8)) {
      String[] halves = line.split(" - ", 2);
      String[] after = halves.length == 2 ? halves[1].split(" ") : new String[0];
      if (after.length >= 3
          && after[0].equals("cgroup")
          && List.of(after[2].split(",")).contains(controller)) {
        found.add(Paths.get(halves[0].split(" ")[4]));
      }
    }
    return found.isEmpty() ? null : found.get(0);
  }

  static void write(Path file, String value) throws IOException {
    Files.write(file, value.getBytes(StandardCharsets.UTF_8));
  }
}
