package dev.nativemem.incident;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.nativemem.NativeMemory;
import dev.nativemem.base.NativeMemoryException;
import dev.nativemem.internal.ByteFormat;
import dev.nativemem.internal.FileOwnership;
import dev.nativemem.internal.Json;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The page on bundles built here: the verdict's figures, escaping, missing files, refusals. */
class IncidentPageTest {
  private static final long MIB = 1L << 20;
  private static final long START = 1_764_538_800_000L;

  /** Every element the page writes; a planted one would be another. */
  static final java.util.Set<String> OUR_TAGS =
      java.util.Set.of(
          "!doctype",
          "html",
          "head",
          "meta",
          "title",
          "style",
          "body",
          "h1",
          "h2",
          "h3",
          "p",
          "section",
          "ul",
          "li",
          "b",
          "code",
          "pre",
          "table",
          "thead",
          "tbody",
          "tr",
          "th",
          "td",
          "span",
          "details",
          "summary",
          "br",
          "img",
          "svg",
          "rect",
          "line",
          "text",
          "path");

  private static final String RESOURCE_LOADER =
      "com.example.ResourceLoader.read(ResourceLoader.java:42)";

  @TempDir Path temp;

  @Test
  void verdictComesFirstAndNamesGrowthTopSiteHandleSiteAndKnownLeak() throws Exception {
    long limit = 1536 * MIB;
    long first = 200 * MIB;
    long last = first + 1229 * MIB;
    Path bundle = bundle();
    List<Object> samples = new ArrayList<>();
    for (int i = 0; i <= 40; i++) {
      // 41 samples a minute apart: 40 min, usage linear from first to last.
      samples.add(sample(START + i * 60_000L, first + (last - first) * i / 40, limit));
    }
    write(bundle, "timeline.json", map("schema", "nativemem-timeline/1", "samples", samples));
    write(bundle, "profile-report.json", profileReport("inflateInit2_", 0.96, 1000 * MIB));
    Map<String, Object> known =
        map(
            "id",
            "FLINK-39753",
            "link",
            "https://issues.apache.org/jira/browse/FLINK-39753",
            "library",
            "Flink",
            "versions",
            List.of("2.2.1"),
            "fixed_in",
            "2.3.0",
            "cost",
            "keeps the block cache alive",
            "workaround",
            "state.backend.rocksdb.manual-compaction.min-interval: 0");
    write(
        bundle,
        "handles.json",
        map(
            "schema",
            "nativemem-handle-report/1",
            "agent_active",
            true,
            "sites",
            List.of(
                site("Deflater", 3, 0, "a.B.small(B.java:7)", null),
                site("Inflater", 2000, 0, RESOURCE_LOADER, null),
                site(
                    "ColumnFamilyOptions",
                    1,
                    1,
                    "org.apache.flink.Compactor.compact(Compactor.java:90)",
                    known))));
    write(bundle, "manifest.json", manifest(null));

    String page = IncidentPage.render(bundle);
    String verdict = section(page, "verdict");
    assertTrue(page.indexOf("id=\"verdict\"") < page.indexOf("id=\"timeline\""), "verdict first");
    // 1229 MiB over 40 min, ending at 1429 MiB of a 1536 MiB limit (93%).
    assertTrue(
        verdict.contains("grew <b>" + ByteFormat.human(last - first) + "</b> in 40 min"), verdict);
    assertTrue(
        verdict.contains("<b>" + Math.round(100.0 * last / limit) + "%</b> of the 1.5 GiB limit"),
        verdict);
    assertTrue(verdict.contains("<b>96%</b> of the sampled native heap"), verdict);
    assertTrue(verdict.contains("<code>inflateInit2_</code>"), verdict);
    // The site with the most leaked handles, then the one with the most open ones.
    assertTrue(
        verdict.contains("<b>1 ColumnFamilyOptions leaked</b> (1 open), created by <code>"),
        verdict);
    assertTrue(
        verdict.contains("<b>2,000 Inflater open</b>, created by <code>" + RESOURCE_LOADER),
        verdict);
    assertTrue(
        verdict.indexOf("ColumnFamilyOptions leaked") < verdict.indexOf("Inflater open"), verdict);
    assertTrue(
        verdict.contains("Known leak <b>FLINK-39753</b> in Flink (you run 2.2.1); fixed in 2.3.0"),
        verdict);
    assertTrue(verdict.contains("manual-compaction.min-interval: 0"), verdict);
    assertTrue(verdict.contains("<b>limit</b> trigger: usage 95.2% of the limit"), verdict);
    assertTrue(
        section(page, "handle-sites-table")
            .contains("com.example.ResourceLoader.read(ResourceLoader.java:42)"));
  }

  @Test
  void openHandlesAreTheVerdictWhenNothingLeaked() throws Exception {
    Path bundle = bundle();
    write(
        bundle,
        "handles.json",
        map(
            "sites",
            List.of(
                site("Deflater", 3, 0, "a.B.small(B.java:7)", null),
                site("Inflater", 2000, 0, RESOURCE_LOADER, null))));
    String verdict = section(IncidentPage.render(bundle), "verdict");
    assertTrue(
        verdict.contains(
            "<b>2,000 Inflater open</b>, created by"
                + " <code>com.example.ResourceLoader.read(ResourceLoader.java:42)</code>"),
        verdict);
  }

  @Test
  void longTimelinesAreThinnedAndHandleCountsReachTheVerdict() throws Exception {
    Path bundle = bundle();
    List<Object> samples = new ArrayList<>();
    int n = 3 * TimelineChart.MAX_POINTS + 1;
    for (int i = 0; i < n; i++) {
      Map<String, Object> s = sample(START + i * 1000L, 100 * MIB + i * 4096L, 512 * MIB);
      s.put("handles_open", 10 + i);
      s.put("handles_leaked", i / 1000);
      samples.add(s);
    }
    write(bundle, "timeline.json", map("interval_ms", 1000, "samples", samples));
    String page = IncidentPage.render(bundle);
    assertTrue(page.contains("the chart draws one sample in 4"), page);
    Matcher rss = Pattern.compile("data-series=\"rss\" d=\"([^\"]*)\"").matcher(page);
    assertTrue(rss.find(), page);
    int points = count(rss.group(1), "L") + 1;
    assertTrue(points <= TimelineChart.MAX_POINTS, points + " points");
    // The last sample is drawn: at the plot's right end (960 px wide, 20 px right margin).
    assertTrue(rss.group(1).contains(" L940.0 "), "the last sample drawn");
    String verdict = section(page, "verdict");
    assertTrue(
        verdict.contains(
            "open 10 → <b>"
                + Html.count(10 + n - 1)
                + "</b>, leaked 0 → <b>"
                + (n - 1) / 1000
                + "</b>"),
        verdict);
  }

  @Test
  void hostileBundleTextIsEscapedEverywhere() throws Exception {
    String evil = "<script>alert(1)</script>\"><img src=x onerror=alert(2)>'";
    Path bundle = bundle();
    Map<String, Object> manifest = manifest(evil);
    manifest.put("host", evil);
    manifest.put("jvm", evil);
    manifest.put("files", List.of(map("name", evil, "what", evil)));
    write(bundle, "manifest.json", manifest);
    write(bundle, "profile-report.json", profileReport(evil, 0.5, 10 * MIB));
    write(bundle, "profile-diff.json", profileReport(evil, 0.5, 10 * MIB));
    write(
        bundle,
        "handles.json",
        map(
            "kinds", List.of(map("kind", evil, "open", 1)),
            "sites",
                List.of(
                    site(evil, 1, 1, evil, map("id", evil, "library", evil, "workaround", evil))),
            "zombie_caches",
                List.of(
                    map(
                        "cache_kind",
                        evil,
                        "capacity_bytes",
                        1,
                        "cache_created_at",
                        evil,
                        "retainers",
                        List.of(map("kind", evil, "state", evil, "created_at", evil))))));
    write(
        bundle,
        "advice.json",
        map(
            "advice",
            List.of(
                map("code", evil, "severity", evil, "message", evil, "suggested_setting", evil))));
    Files.write(bundle.resolve("nmt.txt"), evil.getBytes(StandardCharsets.UTF_8));
    write(
        bundle,
        "snapshot.json",
        map(
            "taken_at",
            evil,
            "breakdown",
            map("view", evil, "attributed", List.of(map("name", evil, "bytes", 1))),
            "stats",
            map("kind", evil, evil, 5)));
    Files.write(
        bundle.resolve("profile-flame.svg"),
        "<svg xmlns='http://www.w3.org/2000/svg'><script>alert(3)</script></svg>"
            .getBytes(StandardCharsets.UTF_8));

    String page = IncidentPage.render(bundle);
    String lower = page.toLowerCase(Locale.ROOT);
    assertFalse(lower.contains("<script"), "no script element");
    assertFalse(
        Pattern.compile("<[^>]*\\son[a-z]+\\s*=").matcher(lower).find(),
        "no event handler attribute inside a tag");
    assertFalse(lower.contains("<img src=x"), "no planted element");
    Matcher tags = Pattern.compile("<(/?[a-z0-9!]+)").matcher(lower);
    while (tags.find()) {
      assertTrue(OUR_TAGS.contains(tags.group(1).replace("/", "")), "tag " + tags.group(1));
    }
    // The one image is the flame graph, as a data URI (a browser runs no script in an image).
    assertEquals(1, count(lower, "<img"), page);
    assertTrue(
        page.contains("&lt;script&gt;alert(1)&lt;/script&gt;&quot;&gt;&lt;img"), "shown as text");
    assertTrue(page.contains("Content-Security-Policy\" content=\"default-src 'none'"));
  }

  @Test
  void missingFilesAreSaidWithTheManifestsReasonNeverThrown() throws Exception {
    Path bundle = bundle();
    Map<String, Object> manifest = manifest(null);
    manifest.put(
        "missing",
        List.of(
            map(
                "what",
                "heap profile",
                "why",
                "heap profiling cannot run here: glibc serves malloc")));
    write(bundle, "manifest.json", manifest);
    // Present but damaged, of the wrong shape, or a link: each said, none thrown.
    Files.write(bundle.resolve("snapshot.json"), "{not json".getBytes(StandardCharsets.UTF_8));
    write(bundle, "handles.json", map("sites", "not a list", "kinds", List.of(1, "x")));
    write(bundle, "timeline.json", map("samples", List.of(map("t", "soon", "rss", "big"))));
    Files.write(
        bundle.resolve("profile-report.json"),
        "[".repeat(200_000).getBytes(StandardCharsets.UTF_8)); // nested past any parser's stack
    Path elsewhere = temp.resolve("advice-elsewhere.json");
    write(temp, "advice-elsewhere.json", map("advice", List.of(map("code", "PLANTED"))));
    Files.createSymbolicLink(bundle.resolve("advice.json"), elsewhere);

    String page = IncidentPage.render(bundle);
    assertTrue(
        page.contains(
            "not captured: heap profile: heap profiling cannot run here: glibc serves malloc"),
        page);
    assertTrue(page.contains("not captured: snapshot.json is not a JSON object"), page);
    assertTrue(page.contains("not captured: profile-report.json is not a JSON object"), page);
    assertTrue(page.contains("not captured: timeline: fewer than two samples (1)"), page);
    assertTrue(page.contains("not captured: advice.json is a symbolic link"), page);
    assertFalse(page.contains("PLANTED"), "nothing read through the link");
    assertTrue(page.contains("<td>heap profile</td><td>heap profiling cannot run here"), "listed");
  }

  @Test
  void theManifestsReasonIsFoundByTheFilesStem() throws Exception {
    Path bundle = bundle();
    Map<String, Object> manifest = manifest(null);
    manifest.put("missing", List.of(map("what", "handles", "why", "the agent is not attached")));
    write(bundle, "manifest.json", manifest);
    assertTrue(
        IncidentPage.render(bundle)
            .contains("not captured: handle report: the agent is not attached"));
  }

  @Test
  void emptyBundleRendersAPageThatSaysSo() throws Exception {
    String page = IncidentPage.render(bundle());
    assertTrue(page.contains("No verdict"), page);
    assertTrue(page.contains("not captured: manifest: manifest.json is not in the bundle"), page);
    assertTrue(page.endsWith("</html>\n"));
  }

  @Test
  void oversizedFilesAreNotRead() throws Exception {
    Path bundle = bundle();
    byte[] big = new byte[(int) Bundle.MAX_SVG_BYTES + 1];
    Files.write(bundle.resolve("profile-flame.svg"), big);
    assertTrue(
        IncidentPage.render(bundle)
            .contains("not captured: profile-flame.svg is larger than 16.0 MiB"));
  }

  @Test
  void refusesADirectoryOthersCanWriteOrAnotherUsersLink() throws Exception {
    Path open = Files.createDirectory(temp.resolve("open"));
    Files.setPosixFilePermissions(open, PosixFilePermissions.fromString("rwxrwxrwx"));
    NativeMemoryException e =
        assertThrows(NativeMemoryException.class, () -> IncidentPage.render(open));
    assertTrue(e.getMessage().contains("writable by other users"), e.getMessage());
    Path link = Files.createSymbolicLink(temp.resolve("link"), bundle());
    assertTrue(
        IncidentPage.render(link).contains("</html>"), "a link of this user is followed once");
    if (FileOwnership.processUid() == 0) {
      Files.setAttribute(link, "unix:uid", 9999, LinkOption.NOFOLLOW_LINKS);
      e = assertThrows(NativeMemoryException.class, () -> IncidentPage.render(link));
      assertTrue(e.getMessage().contains("is a symbolic link of uid 9999"), e.getMessage());
    }
  }

  /**
   * A file of the bundle flipped between a regular file and a FIFO while pages render: every read
   * opens the file once, non-blocking, and refuses a FIFO on its descriptor, so no render waits for
   * a writer that never comes (issue 26, finding 2: the old check-then-open could hang).
   */
  @Test
  void aFifoSwappedInIsRefusedAndNeverHangs() throws Exception {
    Path bundle = bundle();
    write(bundle, "manifest.json", manifest(null));
    Path regular = temp.resolve("regular.json");
    Path fifo = temp.resolve("fifo");
    Files.write(regular, "{}".getBytes(StandardCharsets.UTF_8));
    Process mkfifo = new ProcessBuilder("mkfifo", fifo.toString()).start();
    assertEquals(0, mkfifo.waitFor());
    Path target = bundle.resolve("advice.json");
    java.util.concurrent.atomic.AtomicBoolean flipping =
        new java.util.concurrent.atomic.AtomicBoolean(true);
    Thread flipper =
        new Thread(
            () -> {
              try {
                for (long i = 0; flipping.get(); i++) {
                  Path from = i % 2 == 0 ? fifo : regular;
                  Files.createLink(temp.resolve("next"), from);
                  Files.move(
                      temp.resolve("next"),
                      target,
                      java.nio.file.StandardCopyOption.REPLACE_EXISTING,
                      java.nio.file.StandardCopyOption.ATOMIC_MOVE);
                }
              } catch (Exception e) {
                throw new RuntimeException(e);
              }
            });
    flipper.setDaemon(true);
    flipper.start();
    try {
      org.junit.jupiter.api.Assertions.assertTimeoutPreemptively(
          java.time.Duration.ofSeconds(30),
          () -> {
            int fifos = 0;
            for (long end = System.nanoTime() + 3_000_000_000L; System.nanoTime() < end; ) {
              if (IncidentPage.render(bundle).contains("advice.json is not a regular file")) {
                fifos++;
              }
            }
            assertTrue(fifos > 0, "the FIFO was met and refused");
          });
    } finally {
      flipping.set(false);
      flipper.join(5000);
    }
  }

  @Test
  void writePutsA0600PageInTheBundleAndNeverOverwrites() throws Exception {
    Path bundle = bundle();
    write(bundle, "manifest.json", manifest(null));
    Path page = NativeMemory.incidentPage(bundle);
    assertEquals(bundle.resolve(IncidentPage.FILE_NAME), page);
    assertEquals("rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(page)));
    assertEquals(IncidentPage.render(bundle), Files.readString(page));
    Path second = IncidentPage.write(bundle);
    assertNotEquals(page, second, "an existing page is kept");
    assertTrue(Files.isRegularFile(second, LinkOption.NOFOLLOW_LINKS));
  }

  // Building bundles.

  private Path bundle() throws Exception {
    Path dir = temp.resolve("nativemem-incident-1-20261130T214000Z-limit-" + System.nanoTime());
    Files.createDirectory(
        dir, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
    return dir;
  }

  static void write(Path dir, String name, Map<String, Object> json) throws Exception {
    Files.write(dir.resolve(name), Json.write(json).getBytes(StandardCharsets.UTF_8));
  }

  static Map<String, Object> manifest(String detail) {
    return map(
        "schema",
        "nativemem-incident/1",
        "pid",
        123,
        "host",
        "node-7",
        "captured_at",
        "2026-11-30T21:40:00Z",
        "capture_ms",
        840,
        "trigger",
        map("kind", "limit", "detail", detail == null ? "usage 95.2% of the limit" : detail),
        "previous_bundle",
        null,
        "files",
        List.of(),
        "missing",
        List.of());
  }

  static Map<String, Object> sample(long t, long usage, long limit) {
    Map<String, Object> s = new LinkedHashMap<>();
    for (String key :
        Arrays.asList(
            "allocator_allocated",
            "allocator_resident",
            "heap_used",
            "heap_committed",
            "handles_open",
            "handles_leaked",
            "psi_some_avg10")) {
      s.put(key, null);
    }
    s.put("t", t);
    s.put("limit", limit);
    s.put("usage", usage);
    s.put("rss", usage - 10 * MIB);
    return s;
  }

  static Map<String, Object> profileReport(String topName, double share, long total) {
    Map<String, Object> top =
        map(
            "name",
            topName,
            "flat_bytes",
            (long) (share * total),
            "flat_share",
            share,
            "cumulative_bytes",
            total,
            "cumulative_share",
            1.0);
    return map(
        "total_bytes",
        total,
        "total_objects",
        10,
        "sample_interval_bytes",
        524288,
        "top_flat",
        List.of(top),
        "top_cumulative",
        List.of(top),
        "warnings",
        List.of());
  }

  static Map<String, Object> site(
      String kind, long open, long leaked, String createdAt, Map<String, Object> known) {
    return map(
        "kind",
        kind,
        "open",
        open,
        "leaked",
        leaked,
        "created_at",
        createdAt,
        "known",
        known,
        "stack",
        "\tat " + createdAt);
  }

  static Map<String, Object> map(Object... keysAndValues) {
    Map<String, Object> m = new LinkedHashMap<>();
    for (int i = 0; i < keysAndValues.length; i += 2) {
      m.put((String) keysAndValues[i], keysAndValues[i + 1]);
    }
    return m;
  }

  /** The element with this id, up to the next section or table end. */
  private static String section(String page, String id) {
    Matcher m =
        Pattern.compile("id=\"" + id + "\".*?(</section>|</table>)", Pattern.DOTALL).matcher(page);
    assertTrue(m.find(), "no element " + id + " in " + page);
    return m.group();
  }

  private static int count(String text, String part) {
    int n = 0;
    for (int i = text.indexOf(part); i >= 0; i = text.indexOf(part, i + 1)) {
      n++;
    }
    return n;
  }
}
