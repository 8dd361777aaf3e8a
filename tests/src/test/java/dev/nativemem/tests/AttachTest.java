package dev.nativemem.tests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.jr.ob.JSON;
import dev.nativemem.profile.ProfileRequest;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code nativemem attach <pid> <command>} against running JVMs that did not start with nativemem:
 * the answers are the target's own (checked against the same command run inside it, planted handles
 * of known count and line, a dump the target wrote), and refusals say what to do.
 */
class AttachTest {
  @TempDir Path tmp;

  private static ForkedJvm.Result attach(long pid, String... command) throws Exception {
    List<String> args = new ArrayList<>(List.of("attach", Long.toString(pid)));
    args.addAll(List.of(command));
    return new ForkedJvm().cli(args.toArray(new String[0]));
  }

  @SuppressWarnings("unchecked")
  private static Map<String, Object> object(Map<String, Object> json, String key) {
    return (Map<String, Object>) json.get(key);
  }

  /** With nativemem on the target's class path too: the attached answer is the in-process one. */
  @Test
  void statsAndBreakdownAreTheTargetsOwn() throws Exception {
    try (AttachTargetProcess target =
        new AttachTargetProcess(List.of(ForkedJvm.JAR.toString(), ForkedJvm.TEST_CLASSES))) {
      target.send("self stats --json", "{");
      ForkedJvm.Result attached = attach(target.pid, "stats", "--json");
      assertEquals(0, attached.exitCode, attached.toString());
      Map<String, Object> inside = JSON.std.mapFrom(target.send("self stats --json", "{"));
      Map<String, Object> outside = JSON.std.mapFrom(attached.stdout.trim());
      assertEquals(inside.get("allocator"), outside.get("allocator"));
      long rssInside = ((Number) object(inside, "process").get("rss_bytes")).longValue();
      long rssOutside = ((Number) object(outside, "process").get("rss_bytes")).longValue();
      assertTrue(
          Math.abs(rssInside - rssOutside) < rssInside / 5,
          "RSS " + rssInside + " in-process against " + rssOutside + " attached");

      ForkedJvm.Result breakdown = attach(target.pid, "breakdown", "--json");
      assertEquals(0, breakdown.exitCode, breakdown.toString());
      Map<String, Object> view = JSON.std.mapFrom(breakdown.stdout.trim());
      Map<String, Object> own = JSON.std.mapFrom(target.send("self breakdown --json", "{"));
      assertEquals(own.get("cpus"), view.get("cpus"));
      assertEquals(
          object(own, "container").get("limit_bytes"),
          object(view, "container").get("limit_bytes"));

      // Tracking would put a second nativemem on the bootstrap class path under the application's
      // own: refused, and the application's copy keeps working.
      ForkedJvm.Result handles = attach(target.pid, "handles");
      assertEquals(1, handles.exitCode, handles.toString());
      assertTrue(handles.stderr.contains("loads nativemem itself"), handles.toString());
      assertTrue(target.send("self advice --json", "[").startsWith("["));
    }
  }

  /** Handles count from the first {@code handles}: planted ones exactly, earlier ones never. */
  @Test
  void handlesSinceAttachAreExactAndEarlierOnesAreNotClaimed() throws Exception {
    try (AttachTargetProcess target = new AttachTargetProcess(List.of(ForkedJvm.TEST_CLASSES))) {
      target.send("open 3", "OPENED");
      // A command run first loads nativemem in the agent's own class loader: not the application's.
      assertEquals(0, attach(target.pid, "advice").exitCode);
      ForkedJvm.Result first = attach(target.pid, "handles");
      assertEquals(0, first.exitCode, first.toString());
      assertTrue(first.stdout.contains("Handles tracked since attach at "), first.stdout);
      // Starting tracking in a production JVM is said, with its level, never done silently.
      assertTrue(
          first.stdout.contains("started handle tracking in JVM " + target.pid + " at "),
          first.stdout);
      assertTrue(first.stdout.contains(" at level=full "), first.stdout);
      String opened = target.send("open 5", "OPENED");
      String line = opened.substring(opened.indexOf(" AT ") + 4);

      ForkedJvm.Result later = attach(target.pid, "handles", "--json");
      assertEquals(0, later.exitCode, later.toString());
      Map<String, Object> json = JSON.std.mapFrom(later.stdout.trim());
      assertTrue(((String) json.get("since")).startsWith("attach at "), later.stdout);
      assertEquals(false, json.get("tracking_started"), "started once, by the first call");
      Map<String, Object> report = object(json, "report");
      long open = 0;
      for (Object site : (List<?>) report.get("sites")) {
        Map<?, ?> s = (Map<?, ?>) site;
        String headline = String.valueOf(s.get("created_at"));
        if ("Inflater".equals(s.get("kind"))
            && headline.contains("AttachTarget.openOne(AttachTarget.java:" + line + ")")) {
          open += ((Number) s.get("open")).longValue();
        }
      }
      assertEquals(5, open, later.stdout);
    }
  }

  /**
   * {@code watch start} runs a watch in the target, {@code incident} reaches it through its MBean
   * (the bundle's timeline is that watch's), {@code watch stop} ends it.
   */
  @Test
  void watchAndIncidentReachTheTargetsWatch() throws Exception {
    Path dir = Files.createTempDirectory("attach-watch");
    try (AttachTargetProcess target = new AttachTargetProcess(List.of(ForkedJvm.TEST_CLASSES))) {
      ForkedJvm.Result none = attach(target.pid, "watch");
      assertEquals(0, none.exitCode, none.toString());
      assertTrue(none.stdout.contains("no memory watch runs"), none.stdout);
      ForkedJvm.Result start = attach(target.pid, "watch", "start", "--dir", dir.toString());
      assertEquals(0, start.exitCode, start.toString());
      Thread.sleep(2500); // a few samples
      ForkedJvm.Result incident = attach(target.pid, "incident", "from", "the", "test");
      assertEquals(0, incident.exitCode, incident.toString());
      Path bundle = Paths.get(incident.stdout.trim());
      assertEquals(dir.toRealPath(), bundle.getParent().toRealPath());
      Map<String, Object> manifest =
          JSON.std.mapFrom(Files.readString(bundle.resolve("manifest.json")));
      assertEquals(target.pid, ((Number) manifest.get("pid")).longValue());
      assertTrue(String.valueOf(manifest.get("trigger")).contains("from the test"), "" + manifest);
      List<?> samples =
          (List<?>)
              JSON.std.mapFrom(Files.readString(bundle.resolve("timeline.json"))).get("samples");
      assertTrue(samples.size() >= 2, "the running watch's samples: " + samples.size());
      ForkedJvm.Result status = attach(target.pid, "watch");
      assertTrue(status.stdout.contains("last bundle: " + bundle), status.stdout);
      assertEquals(0, attach(target.pid, "watch", "stop").exitCode);
      assertTrue(attach(target.pid, "watch").stdout.contains("no memory watch runs"));
    } finally {
      try (java.util.stream.Stream<Path> files = Files.walk(dir)) {
        files.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
      }
    }
  }

  /** Under the bundled allocator the target dumps a profile it wrote itself, 0600, analysable. */
  @Test
  void profileAndDumpInATargetUnderTheBundledAllocator() throws Exception {
    try (AttachTargetProcess target = profiledTarget()) {
      ForkedJvm.Result start = startAt4096AndOpen2000(target);
      assertTrue(start.stdout.contains("one sample per 4096 bytes"), start.stdout);
      Path dump = tmp.resolve("attached.heap");
      ForkedJvm.Result dumped = attach(target.pid, "dump", "-o", dump.toString());
      assertEquals(0, dumped.exitCode, dumped.toString());
      assertEquals(dump.toString(), dumped.stdout.trim());
      assertEquals("rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(dump)));
      ForkedJvm.Result report = new ForkedJvm().cli("analyze", dump.toString(), "--top", "10");
      assertEquals(0, report.exitCode, report.toString());
      assertTrue(report.stdout.contains("inflateInit2_"), report.stdout);
      assertEquals(0, attach(target.pid, "profile", "stop").exitCode);
    }
  }

  /**
   * {@code profile start --interval} with the interval in effect keeps what was sampled (the dump
   * still holds the 2000 Inflaters opened before it); another interval says it discarded them.
   */
  @Test
  void theSameIntervalKeepsTheSamplesAndAnotherSaysItDiscardsThem() throws Exception {
    try (AttachTargetProcess target = profiledTarget()) {
      ForkedJvm.Result first = startAt4096AndOpen2000(target);
      assertTrue(first.stdout.contains("discarded every sample taken so far"), first.stdout);
      // 4000 rounds to 4096, the interval in effect: nothing is reset.
      ForkedJvm.Result again = attach(target.pid, "profile", "start", "--interval", "4000");
      assertEquals(0, again.exitCode, again.toString());
      assertTrue(again.stdout.contains("interval unchanged"), again.stdout);
      assertTrue(zlibBytes(dumpAndAnalyze(target, "kept.heap")) > 2000 * 5000L, "kept");
      // A dump refused (the file exists) says why as every command does: no exception class.
      ForkedJvm.Result refused =
          attach(target.pid, "dump", "-o", tmp.resolve("kept.heap").toString());
      assertEquals(1, refused.exitCode, refused.toString());
      assertTrue(refused.stderr.startsWith("nativemem attach dump: "), refused.toString());
      assertTrue(refused.stderr.contains("kept.heap"), refused.toString());
      assertTrue(!refused.stderr.contains("Exception"), refused.toString());
      ForkedJvm.Result other = attach(target.pid, "profile", "start", "--interval", "8192");
      assertEquals(0, other.exitCode, other.toString());
      assertTrue(
          other.stdout.contains("the interval changed from 4096 bytes, which discarded every"),
          other.stdout);
      assertTrue(other.stdout.contains("one sample per 8192 bytes"), other.stdout);
      assertEquals(0, zlibBytes(dumpAndAnalyze(target, "reset.heap")), "discarded");
      ForkedJvm.Result bad = attach(target.pid, "profile", "start", "--interval", "-5");
      assertEquals(2, bad.exitCode, bad.toString());
      assertTrue(bad.stderr.contains("positive number of bytes"), bad.toString());
    }
  }

  /** A target under the bundled allocator (profiling ready, not sampling). */
  private static AttachTargetProcess profiledTarget() throws Exception {
    return new AttachTargetProcess(
        List.of(ForkedJvm.TEST_CLASSES), "LD_PRELOAD", ForkedJvm.OWN_JEMALLOC.toString());
  }

  /** {@code profile start --interval 4096}, then 2000 Inflaters opened; the start's answer. */
  private static ForkedJvm.Result startAt4096AndOpen2000(AttachTargetProcess target)
      throws Exception {
    ForkedJvm.Result start = attach(target.pid, "profile", "start", "--interval", "4096");
    assertEquals(0, start.exitCode, start.toString());
    target.send("open 2000", "OPENED");
    return start;
  }

  /**
   * An application that profiles itself with its own copy of nativemem (on its class path, on plain
   * glibc): {@code attach profile start}, whose agent loads a second copy, is refused with the
   * reason, and {@code profile status} says so, rather than a second engine taking the allocation
   * imports from the first; the application's own profile keeps the 2000 Inflaters.
   */
  @Test
  void anApplicationProfilingItselfKeepsItsProfileWhenAttachAsksToProfile() throws Exception {
    try (AttachTargetProcess target =
        new AttachTargetProcess(List.of(ForkedJvm.JAR.toString(), ForkedJvm.TEST_CLASSES))) {
      assertTrue(target.send("profile in-process", "PROFILING").contains("import-rewriting"));
      target.send("open 2000", "OPENED");
      ForkedJvm.Result start = attach(target.pid, "profile", "start");
      assertEquals(1, start.exitCode, start.toString());
      assertTrue(start.stderr.contains("another copy of nativemem ("), start.toString());
      assertTrue(start.stderr.contains("already profiles this process's heap"), start.toString());
      // Not "ready (inactive)": profiling cannot run from this copy, and the answer says why.
      ForkedJvm.Result status = attach(target.pid, "profile", "status");
      assertEquals(1, status.exitCode, status.toString());
      assertTrue(status.stderr.contains("another copy of nativemem ("), status.toString());
      Path dump = tmp.resolve("own.heap");
      target.send("dump in-process " + dump, "DUMPED");
      ForkedJvm.Result collapsed =
          new ForkedJvm().cli("analyze", dump.toString(), "--format", "collapsed");
      assertEquals(0, collapsed.exitCode, collapsed.toString());
      assertTrue(zlibBytes(collapsed.stdout) > 2000 * 5000L, collapsed.stdout);
    }
  }

  /** Dumps the target's profile and returns the analysis's collapsed stacks. */
  private String dumpAndAnalyze(AttachTargetProcess target, String name) throws Exception {
    Path dump = tmp.resolve(name);
    ForkedJvm.Result dumped = attach(target.pid, "dump", "-o", dump.toString());
    assertEquals(0, dumped.exitCode, dumped.toString());
    ForkedJvm.Result collapsed =
        new ForkedJvm().cli("analyze", dump.toString(), "--format", "collapsed");
    assertEquals(0, collapsed.exitCode, collapsed.toString());
    return collapsed.stdout;
  }

  /** The bytes of the collapsed stacks that run through zlib's {@code inflateInit2_}. */
  private static long zlibBytes(String collapsed) {
    return collapsed
        .lines()
        .filter(l -> l.contains("inflateInit2_"))
        .mapToLong(l -> Long.parseLong(l.substring(l.lastIndexOf(' ') + 1)))
        .sum();
  }

  /**
   * A JVM on plain glibc, no LD_PRELOAD, profiled from outside by import rewriting: the zlib state
   * of 3,000 Inflaters planted at a known line is attributed to inflateInit2_ below that line,
   * within 10% of what jeprof reads from the same program under Debian's jemalloc sampling every
   * allocation; once the Inflaters are ended, under 10% of it is left. (The commands of
   * docs/heap-profiles.md's "attach-profile-plain-jvm" block.)
   */
  @Test
  void aPlainJvmIsProfiledByImportRewritingToTheTruthOfJemalloc() throws Exception {
    long truth = inflateStateUnderJemalloc();
    try (AttachTargetProcess target =
        new AttachTargetProcess(
            List.of(),
            List.of("-Dnativemem.profile.javaFrames=true"),
            List.of(ForkedJvm.TEST_CLASSES))) {
      ForkedJvm.Result start = attach(target.pid, "profile", "start", "--interval", "4096");
      assertEquals(0, start.exitCode, start.toString());
      assertTrue(start.stdout.contains("one sample per 4096 bytes"), start.stdout);
      assertTrue(start.stdout.contains("engine import-rewriting"), start.stdout);
      // The engine never ran here: a first interval discards nothing, and says so.
      assertTrue(
          start.stdout.contains("no sample was held, none discarded")
              && !start.stdout.contains("discarded every sample"),
          start.stdout);
      String opened = target.send("open 3000", "OPENED");
      String line =
          "AttachTarget.openOne(AttachTarget.java:" + opened.split(" AT ")[1].trim() + ")";
      Path plain = dumpOf(target, "plain.heap");
      long planted = inflateBytes(plain, line);
      assertEquals(
          1.0,
          (double) planted / truth,
          0.10,
          "import rewriting put "
              + planted
              + " B under inflateInit2_ below "
              + line
              + ", jemalloc at every allocation "
              + truth
              + " B");
      // jeprof reads the engine's dump as it reads jemalloc's.
      assertTrue(HeapDump.jeprofText(plain).contains("inflateInit2_"));
      target.send("end", "ENDED");
      long left = inflateBytes(dumpOf(target, "ended.heap"), "inflateInit2_");
      assertTrue(left < truth / 10, left + " B left of " + truth + " B after end()");
      // The engine takes an interval as it is (jemalloc would round 5000 to 4096): a new one
      // resets, naming the engine; the same one again keeps the samples.
      ForkedJvm.Result changed = attach(target.pid, "profile", "start", "--interval", "5000");
      assertTrue(
          changed.stdout.contains(
              "the interval changed from 4096 bytes, which discarded every sample taken so far:"
                  + " the import-rewriting engine changes it only by resetting"),
          changed.toString());
      ForkedJvm.Result same = attach(target.pid, "profile", "start", "--interval", "5000");
      assertTrue(same.stdout.contains("interval unchanged"), same.toString());
      assertTrue(same.stdout.contains("one sample per 5000 bytes"), same.toString());
      assertEquals(0, attach(target.pid, "profile", "stop").exitCode);
    }
  }

  /** The truth: the same 3,000 Inflaters under Debian's jemalloc sampling every allocation. */
  private long inflateStateUnderJemalloc() throws Exception {
    try (AttachTargetProcess target =
        new AttachTargetProcess(
            List.of(ForkedJvm.TEST_CLASSES),
            "LD_PRELOAD",
            ForkedJvm.DEBIAN_JEMALLOC.toString(),
            "MALLOC_CONF",
            "prof:true,prof_active:false,lg_prof_sample:0")) {
      assertEquals(0, attach(target.pid, "profile", "start").exitCode);
      target.send("open 3000", "OPENED");
      Path dump = dumpOf(target, "truth.heap");
      String jeprof = HeapDump.jeprofText(dump);
      // jeprof --text: flat flat% sum% cum cum% name, in MB.
      for (String row : jeprof.split("\n")) {
        String[] cells = row.trim().split("\\s+");
        if (cells.length >= 6 && cells[5].equals("inflateInit2_")) {
          return (long) (Double.parseDouble(cells[3]) * (1 << 20));
        }
      }
      throw new AssertionError("no inflateInit2_ in jeprof:\n" + jeprof);
    }
  }

  private Path dumpOf(AttachTargetProcess target, String name) throws Exception {
    Path dump = tmp.resolve(name);
    ForkedJvm.Result dumped = attach(target.pid, "dump", "-o", dump.toString());
    assertEquals(0, dumped.exitCode, dumped.toString());
    return dump;
  }

  /** Bytes in the stacks through {@code inflateInit2_} that also pass {@code frame}. */
  private static long inflateBytes(Path dump, String frame) {
    ProfileRequest.Result analysis =
        ProfileRequest.of(dump).render(ProfileRequest.Format.COLLAPSED).run();
    return analysis
        .rendered(ProfileRequest.Format.COLLAPSED)
        .lines()
        .filter(l -> l.contains("inflateInit2_") && l.contains(frame))
        .mapToLong(l -> Long.parseLong(l.substring(l.lastIndexOf(' ') + 1)))
        .sum();
  }

  @Test
  void aProcessThatIsNotAJvmOrIsGoneIsNamed() throws Exception {
    Process sleeper = new ProcessBuilder("sleep", "60").start();
    try {
      ForkedJvm.Result r = attach(sleeper.pid(), "stats");
      assertEquals(1, r.exitCode, r.toString());
      assertTrue(r.stderr.contains("is not a HotSpot JVM"), r.toString());
    } finally {
      sleeper.destroyForcibly().waitFor();
    }
    ForkedJvm.Result gone = attach(sleeper.pid(), "stats");
    assertEquals(1, gone.exitCode, gone.toString());
    assertTrue(gone.stderr.contains("no process " + sleeper.pid()), gone.toString());
    ForkedJvm.Result unknown = attach(sleeper.pid(), "flamegraph");
    assertEquals(2, unknown.exitCode, unknown.toString());
  }

  /** A target that dies while the command runs leaves the CLI with a message, not a hang. */
  @Test
  void aTargetThatDiesDuringTheCommandIsSaidToHaveExited() throws Exception {
    try (AttachTargetProcess target = new AttachTargetProcess(List.of(ForkedJvm.TEST_CLASSES))) {
      target.send("halt when attached", "ARMED");
      ForkedJvm.Result r = attach(target.pid, "handles");
      assertEquals(1, r.exitCode, r.toString());
      assertTrue(r.stderr.contains("exited during the command"), r.toString());
      assertTrue(target.process.waitFor(10, TimeUnit.SECONDS), "the target did not die");
    }
  }
}
