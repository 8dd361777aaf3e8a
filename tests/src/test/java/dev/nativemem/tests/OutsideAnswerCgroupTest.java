package dev.nativemem.tests;

import static dev.nativemem.tests.ChildCgroupTest.childCgroup;
import static dev.nativemem.tests.ChildCgroupTest.write;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * {@code attach <pid> stats} into a JVM that cannot load the agent (a {@code jlink} of {@code
 * java.base} alone) answers from outside, and that answer reads the target's memory cgroup, not the
 * attaching process's: the target runs in a child cgroup v1 of its own, with a limit written here.
 */
class OutsideAnswerCgroupTest {
  static final long LIMIT = 300L << 20;

  @Test
  void theOutsideAnswerNamesTheTargetsCgroupAndItsLimit() throws Exception {
    String name = "nativemem-outside-" + ProcessHandle.current().pid() + "-" + System.nanoTime();
    Path memory = childCgroup("memory", name);
    try {
      write(memory.resolve("memory.limit_in_bytes"), String.valueOf(LIMIT));
      Path java =
          RuntimeMatrixTest.java(
              new RuntimeMatrixTest.Cell("outside-cgroup", RuntimeMatrixTest.JDK_17, "java.base"));
      String join = "echo $$ > " + memory.resolve("cgroup.procs") + " && exec \"$0\" \"$@\"";
      try (AttachTargetProcess target =
          new AttachTargetProcess(
              java.toString(),
              List.of("sh", "-c", join),
              List.of(),
              List.of(ForkedJvm.TEST_CLASSES))) {
        String cgroup = cgroupOf(target.pid);
        assertTrue(cgroup.endsWith("/" + name), cgroup);
        ForkedJvm.Result r = new ForkedJvm().cli("attach", String.valueOf(target.pid), "stats");
        assertEquals(0, r.exitCode, r.toString());
        assertTrue(r.stdout.contains("answered from outside (no agent)"), r.toString());
        // The limit written above, set at the target's own cgroup, as /proc/<pid>/cgroup names it.
        String limit = String.format(Locale.ROOT, "%.1f MiB", LIMIT / (double) (1 << 20));
        String expected =
            "cgroup    v1 " + cgroup + ": limit " + limit + " (set at " + cgroup + ")";
        assertTrue(r.stdout.contains(expected + ", usage "), expected + "\n" + r);
        // Its usage: what the cgroup charges, within the limit and above nothing.
        Matcher usage =
            Pattern.compile(Pattern.quote(expected) + ", usage ([0-9.]+) MiB").matcher(r.stdout);
        assertTrue(usage.find(), r.toString());
        double usedMib = Double.parseDouble(usage.group(1));
        long charged =
            Long.parseLong(Files.readString(memory.resolve("memory.usage_in_bytes")).trim());
        assertTrue(usedMib > 1 && usedMib <= LIMIT >> 20, r.toString());
        assertTrue(
            Math.abs(usedMib - charged / (double) (1 << 20)) < 64,
            usedMib + " MiB vs " + charged + " charged");
        // What needs the agent fails there, rather than answering stats with exit 0.
        for (List<String> needsTheAgent :
            List.of(List.of("dump", "-o", "x.heap"), List.of("profile", "start"))) {
          List<String> args = new java.util.ArrayList<>(List.of("attach", "" + target.pid));
          args.addAll(needsTheAgent);
          ForkedJvm.Result refused = new ForkedJvm().cli(args.toArray(new String[0]));
          assertEquals(1, refused.exitCode, refused.toString());
          assertEquals("", refused.stdout, refused.toString());
          assertTrue(
              refused.stderr.contains(
                  "java.instrument module (add it to the jlink --add-modules list), so '"
                      + needsTheAgent.get(0)
                      + "' cannot run there; stats, breakdown, advice answer from outside"),
              refused.toString());
        }
      }
    } finally {
      for (int i = 0; i < 50 && !deleted(memory); i++) {
        Thread.sleep(100); // the target's exit leaves the cgroup empty a moment later
      }
    }
  }

  private static boolean deleted(Path cgroup) {
    try {
      Files.deleteIfExists(cgroup);
      return true;
    } catch (java.io.IOException e) {
      return false;
    }
  }

  /** The target's memory cgroup, as its {@code /proc/<pid>/cgroup} names it. */
  private static String cgroupOf(long pid) throws Exception {
    for (String line : Files.readAllLines(Path.of("/proc", String.valueOf(pid), "cgroup"))) {
      String[] parts = line.split(":", 3);
      if (parts.length == 3 && List.of(parts[1].split(",")).contains("memory")) {
        return parts[2];
      }
    }
    throw new AssertionError("no memory cgroup in /proc/" + pid + "/cgroup");
  }
}
