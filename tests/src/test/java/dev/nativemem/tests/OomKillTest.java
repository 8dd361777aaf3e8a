package dev.nativemem.tests;

import static dev.nativemem.tests.ChildCgroupTest.childCgroup;
import static dev.nativemem.tests.ChildCgroupTest.write;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.jr.ob.JSON;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The watch's reason to exist, for real: a JVM in a 512 MiB memory cgroup (no swap) leaks zlib
 * memory from one line until the kernel OOM-kills it; the incident bundle it wrote before dying is
 * complete and names that line, and its verdict is in the JVM's log (stderr), naming the line too;
 * as usage nears the limit the watch escalates, so that the newest bundle is at most 10 s older
 * than the kill, and an incident keeps two bundles (its first and its newest). {@code
 * bench/oom-kill.sh} runs this ten times.
 */
class OomKillTest {
  static final long LIMIT = 512L << 20;

  @TempDir Path temp;

  @SuppressWarnings("unchecked")
  @Test
  void theBundleWrittenBeforeTheKillNamesThePlantedLeak() throws Exception {
    String name = "nativemem-oom-" + ProcessHandle.current().pid() + "-" + System.nanoTime();
    Path memory = childCgroup("memory", name);
    Path incidents = temp.resolve("incidents");
    try {
      write(memory.resolve("memory.limit_in_bytes"), String.valueOf(LIMIT));
      if (Files.exists(memory.resolve("memory.memsw.limit_in_bytes"))) {
        write(memory.resolve("memory.memsw.limit_in_bytes"), String.valueOf(LIMIT));
      }
      write(memory.resolve("memory.swappiness"), "0");
      String join = "echo $$ > " + memory.resolve("cgroup.procs") + " && exec \"$0\" \"$@\"";
      ForkedJvm.Result r =
          new ForkedJvm()
              .withTestClasses()
              .launcher("sh", "-c", join)
              .jvmArg(
                  "-Xmx128m",
                  "-javaagent:" + ForkedJvm.JAR + "=level=full,watch=on,watch.dir=" + incidents)
              .main(OomLeakChild.class.getName(), String.valueOf(LIMIT));
      long killedBy = System.currentTimeMillis(); // the child's exit, read back within milliseconds

      assertEquals(137, r.exitCode, "killed by SIGKILL: " + r);
      assertTrue(oomKills(memory) >= 1, "the cgroup counts the OOM kill");
      // A capture the kill cut short leaves its temporary directory (".nativemem-incident-..."),
      // never a bundle.
      List<Path> bundles =
          list(incidents).stream()
              .filter(b -> !b.getFileName().toString().startsWith("."))
              .collect(Collectors.toList());
      // An escalation is put in place (its verdict's parts first, its advice after) before the one
      // it replaces is removed: a kill between the two leaves that one too.
      assertTrue(
          !bundles.isEmpty() && bundles.size() <= 3,
          "the incident's first bundle and its newest escalation (and, killed while replacing"
              + " it, the one before), no more: "
              + bundles
              + r);
      Path bundle = bundles.get(0);
      assertTrue(bundle.getFileName().toString().endsWith("-limit"), bundle.toString());

      Map<String, Object> manifest = json(bundle.resolve("manifest.json"));
      for (Map<String, Object> file : (List<Map<String, Object>>) manifest.get("files")) {
        assertTrue(Files.exists(bundle.resolve((String) file.get("name"))), file.toString());
      }
      Map<String, Object> trigger = (Map<String, Object>) manifest.get("trigger");
      assertEquals(
          85.0, ((Number) trigger.get("threshold_percent")).doubleValue(), trigger.toString());

      // The timeline saw the limit we wrote and usage past the threshold.
      List<Map<String, Object>> samples =
          (List<Map<String, Object>>) json(bundle.resolve("timeline.json")).get("samples");
      Map<String, Object> last = samples.get(samples.size() - 1);
      assertEquals(LIMIT, ((Number) last.get("limit")).longValue());
      assertTrue(((Number) last.get("usage")).longValue() >= LIMIT * 85 / 100, last.toString());

      // handles.json names the planted line as the site of thousands of open Inflaters.
      String planted = "OomLeakChild.leakOne(OomLeakChild.java:" + plantedLine() + ")";
      Map<String, Object> handles = json(bundle.resolve("handles.json"));
      long openAtPlanted = 0;
      for (Map<String, Object> site : (List<Map<String, Object>>) handles.get("sites")) {
        if ("Inflater".equals(site.get("kind")) && String.valueOf(site).contains(planted)) {
          openAtPlanted += ((Number) site.get("open")).longValue();
        }
      }
      assertTrue(openAtPlanted > 5000, planted + ": " + openAtPlanted + " open in " + handles);
      // The page written before the kill leads with that site: what the person paged reads first.
      String page = Files.readString(bundle.resolve("incident.html"));
      int verdict = page.indexOf("<section id=\"verdict\">");
      String lead = page.substring(verdict, page.indexOf("</section>", verdict));
      assertTrue(
          lead.contains(" Inflater open</b>, created by <code>dev.nativemem.tests." + planted),
          lead);
      // The same verdict reached the JVM's log before the kill: what outlives the pod.
      IncidentLogLines log = IncidentLogLines.of(r.stderr, bundle);
      log.assertMatches(bundle, planted);

      // The newest evidence: taken as the limit neared, at most 10 s before the kill.
      Path newest = bundles.get(bundles.size() - 1);
      Map<String, Object> newestManifest = json(newest.resolve("manifest.json"));
      long before =
          killedBy
              - java.time.Instant.parse((String) newestManifest.get("captured_at")).toEpochMilli();
      assertTrue(
          before <= 10_000, newest + " was captured " + before + " ms before the kill\n" + r);
      assertTrue(bundles.size() >= 2, "the watch escalated: " + bundles + r);
      Map<String, Object> escalated = (Map<String, Object>) newestManifest.get("trigger");
      assertTrue(
          ((Number) escalated.get("threshold_percent")).doubleValue() > 85.0, escalated.toString());
      assertTrue(
          Files.readString(newest.resolve("handles.json")).contains(planted),
          newest + " names the planted line");
      // The verdict in the log and the advice are the newest complete bundle's: the newest's,
      // unless the kill cut its capture short after its verdict's parts (its manifest says so).
      Path complete = newestComplete(bundles);
      IncidentLogLines.of(r.stderr, complete).assertMatches(complete, planted);
      // One snapshot, one figure: the advice's headroom is the breakdown's.
      long headroom =
          ((Number)
                  ((Map<String, Object>) json(complete.resolve("snapshot.json")).get("breakdown"))
                      .get("headroom_bytes"))
              .longValue();
      String advised = Files.readString(complete.resolve("advice.txt"));
      // Shown as people read it: KiB below 1 MiB, MiB above, one decimal.
      String shown =
          headroom >= 1 << 20
              ? String.format(java.util.Locale.ROOT, "%.1f MiB", headroom / 1048576.0)
              : String.format(java.util.Locale.ROOT, "%.1f KiB", headroom / 1024.0);
      assertTrue(
          advised.contains("only " + shown + " of the "),
          headroom + " B in the breakdown; the advice: " + advised);
      System.out.println("newest bundle captured " + before + " ms before the kill");
      System.out.println("verdict block in the log: " + log.blockBytes + " bytes");
      System.out.println(
          "bundle complete "
              + (killedBy - completedAt(manifest))
              + " ms before the kill (capture "
              + manifest.get("capture_ms")
              + " ms)");
    } finally {
      Files.deleteIfExists(memory);
    }
  }

  /** The line of {@code new Inflater()} in the child's source: the truth the bundle must name. */
  static int plantedLine() throws IOException {
    List<String> lines =
        Files.readAllLines(
            Paths.get("src/test/java/dev/nativemem/tests/OomLeakChild.java"),
            StandardCharsets.UTF_8);
    for (int i = 0; i < lines.size(); i++) {
      if (lines.get(i).contains("new Inflater(); // planted leak")) {
        return i + 1;
      }
    }
    throw new IllegalStateException("the planted line is gone from OomLeakChild.java");
  }

  /** When the bundle was complete: its capture time plus how long the capture took (ms). */
  static long completedAt(Map<String, Object> manifest) {
    return java.time.Instant.parse((String) manifest.get("captured_at")).toEpochMilli()
        + ((Number) manifest.get("capture_ms")).longValue();
  }

  static long oomKills(Path cgroup) throws IOException {
    for (String line : Files.readAllLines(cgroup.resolve("memory.oom_control"))) {
      if (line.startsWith("oom_kill ")) {
        return Long.parseLong(line.substring(9).trim());
      }
    }
    return -1;
  }

  static List<Path> list(Path dir) throws IOException {
    try (Stream<Path> s = Files.list(dir)) {
      return s.sorted().collect(Collectors.toList());
    }
  }

  static Map<String, Object> json(Path file) throws IOException {
    return JSON.std.mapFrom(Files.readString(file));
  }

  /**
   * The newest of {@code bundles} (oldest first) whose capture ended: a bundle the kill cut short
   * after its verdict's parts were in place still has the manifest saying its advice was to come.
   */
  static Path newestComplete(List<Path> bundles) throws IOException {
    for (int i = bundles.size() - 1; i >= 0; i--) {
      String manifest = Files.readString(bundles.get(i).resolve("manifest.json"));
      if (!manifest.contains("written after this manifest")) {
        return bundles.get(i);
      }
    }
    throw new AssertionError("no bundle's capture ended: " + bundles);
  }
}
