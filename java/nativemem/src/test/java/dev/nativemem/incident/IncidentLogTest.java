package dev.nativemem.incident;

import static dev.nativemem.incident.IncidentPageTest.manifest;
import static dev.nativemem.incident.IncidentPageTest.map;
import static dev.nativemem.incident.IncidentPageTest.profileReport;
import static dev.nativemem.incident.IncidentPageTest.sample;
import static dev.nativemem.incident.IncidentPageTest.site;
import static dev.nativemem.incident.IncidentPageTest.write;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.nativemem.internal.Json;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The verdict's block for the JVM's log: prefixes, one JSON line, escaping, bounds, absences. */
class IncidentLogTest {
  private static final long MIB = 1L << 20;
  private static final String FRAME = "com.example.Loader.read(Loader.java:42)";
  private static final Path FINAL = Path.of("/volume/incidents/nativemem-incident-123-x-limit");

  @TempDir Path temp;

  /**
   * A profile that saw under half of what was malloc'd (on JDK 25, Netty allocates through FFM's
   * dlsym'd malloc, which no import carries) says so beside its top function, and what sees all;
   * one that saw most of it says nothing more; under jemalloc the rest is what sampling missed.
   */
  @Test
  void aProfileThatSawUnderHalfOfTheMallocdHeapSaysSo() throws Exception {
    for (String kind : List.of("glibc", "jemalloc")) {
      for (long mallocd : List.of(275 * MIB, 20 * MIB)) {
        Path bundle = Files.createDirectory(temp.resolve(kind + mallocd));
        limitedTimeline(bundle);
        write(bundle, "profile-report.json", profileReport("ResourceBitMap", 0.1, 15 * MIB));
        write(
            bundle,
            "snapshot.json",
            map("breakdown", map("allocator", map("kind", kind, "allocated_bytes", mallocd))));
        write(bundle, "manifest.json", manifest("usage 87.1% of the 512.0 MiB limit"));
        String block = IncidentLog.render(bundle, FINAL);
        boolean partial = mallocd > 30 * MIB;
        assertEquals(
            partial,
            block.contains("The profile saw 15.0 MiB of the 275.0 MiB malloc'd: the rest was"),
            block);
        assertEquals(
            partial && kind.equals("glibc"),
            block.contains("through a pointer from dlsym (Java's FFM on JDK 22 and later)"),
            block);
        assertEquals(
            partial && kind.equals("jemalloc"),
            block.contains("the rest was allocated while sampling was off."),
            block);
      }
    }
  }

  @SuppressWarnings("unchecked")
  @Test
  void everyLineHasThePrefixAndTheJsonLineCarriesTheVerdictsFacts() throws Exception {
    Path bundle = bundle();
    limitedTimeline(bundle);
    write(bundle, "profile-report.json", profileReport("inflateInit2_", 0.93, 400 * MIB));
    Map<String, Object> known =
        map("id", "FLINK-39923", "library", "Flink", "fixed_in", null, "link", "https://x/1");
    sites(
        bundle,
        List.of(
            site("Inflater", 11_234, 0, FRAME, null),
            site("Statistics", 3, 3, "o.a.f.RocksDBHandle.loadDb(RocksDBHandle.java:9)", known),
            site("Deflater", 2, 1, "a.B.c(B.java:1)", null)));
    write(bundle, "manifest.json", manifest("usage 87.1% of the 512.0 MiB limit"));

    String block = IncidentLog.render(bundle, FINAL);
    List<String> lines = List.of(block.split("\n"));
    assertTrue(block.endsWith("\n"));
    List<String> json = new ArrayList<>();
    for (String line : lines) {
      assertTrue(
          line.startsWith(IncidentLog.PREFIX) || line.startsWith(IncidentLog.JSON_PREFIX), line);
      if (line.startsWith(IncidentLog.JSON_PREFIX)) {
        json.add(line.substring(IncidentLog.JSON_PREFIX.length()));
      }
    }
    assertEquals(1, json.size(), block);
    assertTrue(lines.get(lines.size() - 1).startsWith(IncidentLog.JSON_PREFIX), "JSON last");
    assertTrue(block.contains("headroom 66.0 MiB, 12.9% of the 512.0 MiB limit"), block);
    assertTrue(block.contains("11,234 Inflater open, created by " + FRAME + "."), block);
    assertTrue(block.contains("3 Statistics leaked (3 open)"), block);
    assertTrue(block.contains("93% of the sampled native heap"), block);
    assertTrue(block.contains("Known leak FLINK-39923 in Flink; no fixed release yet"), block);
    assertTrue(block.contains("bundle " + FINAL + " (being written"), block);
    assertFalse(block.contains("<b>") || block.contains("&"), "no markup: " + block);

    Map<String, Object> j = Json.parseObject(json.get(0));
    assertEquals(IncidentLog.SCHEMA, j.get("schema"));
    assertEquals(123L, ((Number) j.get("pid")).longValue());
    assertEquals("limit", ((Map<String, Object>) j.get("trigger")).get("kind"));
    assertEquals(66 * MIB, ((Number) j.get("headroom_bytes")).longValue());
    assertEquals(0.1289, ((Number) j.get("headroom_share")).doubleValue(), 1e-9);
    assertEquals(512 * MIB, ((Number) j.get("limit_bytes")).longValue());
    Map<String, Object> top = (Map<String, Object>) j.get("top_function");
    assertEquals("inflateInit2_", top.get("name"));
    assertEquals(0.93, ((Number) top.get("flat_share")).doubleValue(), 1e-9);
    Map<String, Object> open = (Map<String, Object>) j.get("top_open_site");
    assertEquals(FRAME, open.get("created_at"));
    assertEquals(11_234L, ((Number) open.get("open")).longValue());
    Map<String, Object> leaked = (Map<String, Object>) j.get("top_leaked_site");
    assertEquals("FLINK-39923", leaked.get("known_id"));
    assertEquals(
        "FLINK-39923", ((List<Map<String, Object>>) j.get("known_leaks")).get(0).get("id"));
    assertEquals(Map.of(), j.get("absent"));
    assertEquals(FINAL.toString(), j.get("bundle"));
  }

  /**
   * Without a memory cgroup limit the manifest's basis is this process's RSS: the cgroup's usage
   * (page cache, other processes) grew 912 MiB while RSS grew 115 MiB, and the verdict says RSS.
   */
  @Test
  void withoutALimitTheGrowthIsTheProcesssRssAndSaysSo() throws Exception {
    Path bundle = bundle();
    Map<String, Object> first = sample(1000, 1000 * MIB, 0);
    Map<String, Object> last = sample(121_000, 1912 * MIB, 0);
    first.put("limit", null);
    last.put("limit", null);
    first.put("rss", 450 * MIB);
    last.put("rss", 565 * MIB);
    write(bundle, "timeline.json", map("samples", List.of(first, last)));
    write(bundle, "manifest.json", manifest(null));
    String block = IncidentLog.render(bundle, FINAL);
    assertTrue(
        block.contains(
            "RSS (the basis without a memory cgroup limit) grew 115.0 MiB in 2 min, from 450.0"
                + " MiB to 565.0 MiB."),
        block);
    assertFalse(block.contains("cgroup) grew"), block);
  }

  /** Under a limit the basis is the cgroup's usage, which the limit counts. */
  @Test
  void underALimitTheGrowthIsTheCgroupsUsage() throws Exception {
    Path bundle = bundle();
    limitedTimeline(bundle);
    write(bundle, "manifest.json", manifest(null));
    String block = IncidentLog.render(bundle, FINAL);
    assertTrue(block.contains("Memory usage (cgroup) grew 146.0 MiB in 60 s"), block);
  }

  @SuppressWarnings("unchecked")
  @Test
  void atTheSampledLevelTheVerdictNamesTheRecordedSiteNotTheStacklessRemainder() throws Exception {
    Path bundle = bundle();
    // The agent's default level: one stack in 128, the rest counted at a site without a line.
    sites(
        bundle,
        List.of(site("Inflater", 10_915, 0, null, null), site("Inflater", 86, 0, FRAME, null)));
    write(bundle, "manifest.json", manifest(null));
    String block = IncidentLog.render(bundle, FINAL);
    assertTrue(
        block.contains(
            "86 Inflater open, created by " + FRAME + " (and 10,915 open without a recorded stack"),
        block);
    Map<String, Object> open = (Map<String, Object>) json(block).get("top_open_site");
    assertEquals(FRAME, open.get("created_at"));
    assertEquals(10_915L, ((Number) open.get("without_stack")).longValue());
  }

  @SuppressWarnings("unchecked")
  @Test
  void absentPartsAreSaidAbsentWithTheManifestsReason() throws Exception {
    Path bundle = bundle();
    Map<String, Object> manifest = manifest(null);
    manifest.put(
        "missing",
        List.of(
            map("what", "heap profile", "why", "heap profiling cannot run here: glibc"),
            map("what", "handle report", "why", "the nativemem agent is not running")));
    write(bundle, "manifest.json", manifest);
    String block = IncidentLog.render(bundle, FINAL);
    assertTrue(
        block.contains(
            IncidentLog.PREFIX + "absent: heap profile: heap profiling cannot run here: glibc\n"),
        block);
    assertTrue(block.contains("absent: handle report: the nativemem agent is not running"), block);
    assertTrue(block.contains("headroom unknown: no timeline"), block);
    Map<String, Object> j = json(block);
    assertNull(j.get("top_function"));
    assertNull(j.get("top_open_site"));
    assertNull(j.get("headroom_bytes"));
    Map<String, Object> absent = (Map<String, Object>) j.get("absent");
    assertEquals("heap profile: heap profiling cannot run here: glibc", absent.get("profile"));
    assertTrue(((String) absent.get("handles")).contains("agent is not running"), "" + absent);
    assertTrue(j.containsKey("top_leaked_site"), "every key, null when absent: " + j);
  }

  /**
   * The reason a JVM has no heap profile where no engine runs (glibc on an architecture without
   * import rewriting), as the native library words it and the watch writes it: the log line and the
   * JSON line carry it whole, down to the end of the preload command.
   */
  @Test
  void theHintForAnAbsentProfileKeepsItsCommandWhole() throws Exception {
    String why =
        "heap profiling cannot run here: heap profiles need jemalloc, but glibc serves malloc in"
            + " this process (/lib/x86_64-linux-gnu/libc.so.6) (on this architecture nativemem has"
            + " no import-rewriting engine, which profiles glibc's malloc without a restart on"
            + " Linux x86-64 and aarch64 only). Start the JVM with the preload allocator: run 'java"
            + " -jar /opt/app/lib/nativemem-0.1.0.jar env' and set the LD_PRELOAD it prints"
            + " (profiling ready by default), or use Debian's jemalloc:"
            + " LD_PRELOAD=/usr/lib/x86_64-linux-gnu/libjemalloc.so.2"
            + " MALLOC_CONF=prof:true,prof_active:false";
    assertTrue(why.length() > IncidentLog.MAX_TEXT, why);
    Path bundle = bundle();
    Map<String, Object> manifest = manifest(null);
    manifest.put("missing", List.of(map("what", "heap profile", "why", why)));
    write(bundle, "manifest.json", manifest);
    String block = IncidentLog.render(bundle, FINAL);
    assertTrue(block.contains(IncidentLog.PREFIX + "absent: heap profile: " + why + "\n"), block);
    assertEquals(
        "heap profile: " + why, ((Map<?, ?>) json(block).get("absent")).get("profile"), block);

    String endless = "Run this. " + "Then set A=" + "x".repeat(3 * IncidentLog.MAX_HINT);
    assertEquals(
        "Run this. (the rest is in the bundle's manifest.json)", IncidentLog.hint(endless));
  }

  @Test
  void controlCharactersFromTheBundleAreEscapedAndLongStringsCut() throws Exception {
    Path bundle = bundle();
    String hostile =
        "evil\n" + IncidentLog.JSON_PREFIX + "{}\u001b[2J\u202e\u2028\\" + "x".repeat(5000);
    write(
        bundle,
        "handles.json",
        map("sites", List.of(site("Inflater" + hostile, 5, 0, "a.B(" + hostile + ")", null))));
    write(bundle, "profile-report.json", profileReport(hostile, 0.5, 10 * MIB));
    write(bundle, "manifest.json", manifest(hostile));
    String block = IncidentLog.render(bundle, FINAL);
    int jsonLines = 0;
    for (String line : block.split("\n")) {
      assertTrue(line.startsWith("nativemem-incident"), line);
      jsonLines += line.startsWith(IncidentLog.JSON_PREFIX) ? 1 : 0;
      for (char c : line.toCharArray()) {
        assertTrue(c >= 0x20 && c != 0x7f && c != '\u202e' && c != '\u2028', "raw char in " + line);
      }
    }
    assertEquals(1, jsonLines, block);
    // Seen, not acted on: escapes in the human lines; in the JSON line, the same string back.
    assertTrue(
        block.contains("evil\\x0anativemem-incident-json: {}\\x1b[2J\\u202e\\u2028\\\\x"), block);
    @SuppressWarnings("unchecked")
    Map<String, Object> top = (Map<String, Object>) json(block).get("top_function");
    assertEquals(hostile.substring(0, IncidentLog.MAX_TEXT) + "...", top.get("name"));
    // Each string cut at MAX_TEXT: a handful of them, not 5,000 characters each.
    assertTrue(block.length() < 4096, block.length() + " characters");
    assertTrue(String.valueOf(json(block).get("top_open_site")).length() < 2000);
  }

  @Test
  void aBundleThatCannotBeReadStillGivesTheBlockAndItsJsonLine() throws Exception {
    Path open = Files.createDirectory(temp.resolve("open"));
    Files.setPosixFilePermissions(open, PosixFilePermissions.fromString("rwxrwxrwx"));
    String block = IncidentLog.render(open, FINAL);
    assertTrue(block.startsWith(IncidentLog.PREFIX + "absent: the verdict could not be computed"));
    assertTrue(block.contains("writable by other users"), block);
    assertEquals(FINAL.toString(), json(block).get("bundle"));
  }

  @Test
  void theCompletionLineNamesTheBundle() {
    assertEquals(
        IncidentLog.PREFIX + "bundle complete: " + FINAL + " (captured in 812 ms)\n",
        IncidentLog.completed(FINAL, 812));
    // A path we name ourselves is escaped, never cut: it must stay usable however long.
    Path deep = Path.of("/v/" + "d".repeat(300), "nativemem-incident-1-x\u001b-limit");
    assertEquals(
        IncidentLog.PREFIX
            + "bundle complete: "
            + deep.toString().replace("\u001b", "\\x1b")
            + " (captured in 1 ms)\n",
        IncidentLog.completed(deep, 1));
  }

  private static Map<String, Object> json(String block) {
    for (String line : block.split("\n")) {
      if (line.startsWith(IncidentLog.JSON_PREFIX)) {
        return Json.parseObject(line.substring(IncidentLog.JSON_PREFIX.length()));
      }
    }
    throw new AssertionError("no JSON line in " + block);
  }

  /** Usage from 300 to 446 MiB in a minute under a 512 MiB limit. */
  private static void limitedTimeline(Path bundle) throws Exception {
    write(
        bundle,
        "timeline.json",
        map(
            "samples",
            List.of(sample(1000, 300 * MIB, 512 * MIB), sample(61_000, 446 * MIB, 512 * MIB))));
  }

  private static void sites(Path bundle, List<Map<String, Object>> sites) throws Exception {
    write(bundle, "handles.json", map("sites", sites));
  }

  private Path bundle() throws Exception {
    Path dir = temp.resolve("nativemem-incident-123-" + System.nanoTime());
    Files.createDirectory(
        dir, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
    return dir;
  }
}
