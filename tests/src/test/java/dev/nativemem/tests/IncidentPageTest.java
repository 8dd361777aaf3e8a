package dev.nativemem.tests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.jr.ob.JSON;
import java.awt.image.BufferedImage;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import javax.imageio.ImageIO;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The incident page of a bundle made for real: a child JVM with the agent and the preload allocator
 * plants open Inflaters on a known line while sampling a timeline, writes the bundle through the
 * public API and renders it; the verdict must name that line, the count and the timeline's growth,
 * and headless Chromium must draw the page and hold its parts in the DOM.
 */
class IncidentPageTest {
  private static Path work;
  private static Path bundle;
  private static Path page;
  private static int plantedLine;

  @BeforeAll
  static void makeABundle() throws Exception {
    work = Paths.get(System.getProperty("nativemem.test.workdir", "target/e2e"), "incident");
    Files.createDirectories(work);
    work = work.toRealPath();
    ForkedJvm.Result env = new ForkedJvm().cli("env", "--dir", work.resolve("preload").toString());
    assertEquals(0, env.exitCode, env.toString());
    Path preload = work.resolve("preload").toRealPath().resolve("libnativemem_jemalloc.so");
    bundle = work.resolve("nativemem-incident-" + System.nanoTime() + "-on-demand");
    ForkedJvm.Result r =
        new ForkedJvm()
            .withTestClasses()
            .env("LD_PRELOAD", preload.toString())
            .jvmArg("-javaagent:" + ForkedJvm.JAR + "=level=full")
            .main(IncidentBundleChild.class.getName(), bundle.toString());
    assertEquals(0, r.exitCode, r.toString());
    plantedLine = Integer.parseInt(value(r, "PLANTED_LINE"));
    page = Paths.get(value(r, "PAGE"));
    assertEquals(bundle.resolve("incident.html"), page, r.toString());
  }

  @Test
  void verdictNamesThePlantedLineTheCountAndTheTimelinesGrowth() throws Exception {
    String html = Files.readString(page);
    String verdict = between(html, "<section id=\"verdict\">", "</section>");
    String site =
        "dev.nativemem.tests.IncidentBundleChild.main(IncidentBundleChild.java:"
            + plantedLine
            + ")";
    assertTrue(
        verdict.contains(
            "<b>"
                + String.format("%,d", IncidentBundleChild.INFLATERS)
                + " Inflater open</b>, created by <code>"
                + site
                + "</code>"),
        verdict);
    // The growth line against the timeline the child sampled: first and last sample of the series.
    Map<String, Object> timeline =
        JSON.std.mapFrom(Files.readString(bundle.resolve("timeline.json")));
    @SuppressWarnings("unchecked")
    List<Map<String, Object>> samples = (List<Map<String, Object>>) timeline.get("samples");
    // The manifest's basis: the cgroup's usage under a memory limit, else this process's RSS.
    boolean limited =
        samples.stream()
            .anyMatch(
                s -> s.get("limit") instanceof Number && ((Number) s.get("limit")).longValue() > 0);
    String series = limited ? "usage" : "rss";
    assertTrue(verdict.contains(limited ? "Memory usage (cgroup) grew" : "RSS ("), verdict);
    List<Map<String, Object>> withSeries =
        samples.stream().filter(s -> s.get(series) != null).collect(Collectors.toList());
    long first = ((Number) withSeries.get(0).get(series)).longValue();
    long last = ((Number) withSeries.get(withSeries.size() - 1).get(series)).longValue();
    Matcher growth =
        Pattern.compile(" (grew|fell) <b>([0-9.]+) (B|KiB|MiB|GiB)</b> in ").matcher(verdict);
    assertTrue(growth.find(), verdict);
    assertEquals(last >= first ? "grew" : "fell", growth.group(1), verdict);
    double unit = 1L << (10 * List.of("B", "KiB", "MiB", "GiB").indexOf(growth.group(3)));
    // Printed with one decimal.
    assertEquals(Math.abs(last - first) / unit, Double.parseDouble(growth.group(2)), 0.05, verdict);
    // Under the preload allocator profiling is ready, so the bundle has its profile.
    assertTrue(
        Files.exists(bundle.resolve("profile-report.json")),
        Files.readString(bundle.resolve("manifest.json")));
    // The top site and its share against jeprof's reading of the bundle's own dump.
    String jeprof = HeapDump.jeprofText(bundle.resolve("profile.heap"));
    Matcher top =
        Pattern.compile(
                "^ +[0-9.]+ +([0-9.]+)% +[0-9.]+% +[0-9.]+ +[0-9.]+% (\\S+)$", Pattern.MULTILINE)
            .matcher(jeprof);
    assertTrue(top.find(), jeprof);
    Matcher said =
        Pattern.compile(
                "<b>([0-9.]+)%</b> of the sampled native heap \\(.*?\\) allocated in <code>(.*?)</code>")
            .matcher(verdict);
    assertTrue(said.find(), verdict);
    assertEquals(top.group(2), said.group(2), jeprof);
    assertEquals(Double.parseDouble(top.group(1)), Double.parseDouble(said.group(1)), 1.0, jeprof);
    // The planted zlib streams (inflateInit2_'s state, about 7 KiB each) are among the top sites
    // (the top one unless the JIT's arenas happen to be larger at the dump).
    assertTrue(
        between(html, "<table id=\"top-sites-table\"", "</table>")
            .contains("<code>inflateInit2_</code>"),
        html);
    assertTrue(html.contains("<img class=\"flame\""), "flame graph embedded");
  }

  @Test
  void chromiumDrawsThePageAndItsDomHoldsVerdictChartAndTables() throws Exception {
    Assumptions.assumeTrue(Chromium.installed(), Chromium.MISSING);
    Path profile = Files.createTempDirectory(work, "chromium-");
    Path png = work.resolve("incident-" + System.nanoTime() + ".png");
    String url = page.toUri().toString();
    String dom = chromium(profile, "--dump-dom", url);
    assertTrue(dom.contains("<section id=\"verdict\">"), dom);
    assertTrue(dom.contains("IncidentBundleChild.java:" + plantedLine), "verdict in the DOM");
    assertTrue(dom.contains("<svg id=\"timeline-chart\""), "chart in the DOM");
    for (String series : new String[] {"rss", "allocator_allocated", "heap_used"}) {
      assertTrue(dom.contains("data-series=\"" + series + "\""), series + " drawn");
    }
    for (String table : new String[] {"breakdown-table", "handle-sites-table", "advice-table"}) {
      assertTrue(dom.contains("<table id=\"" + table + "\""), table);
    }

    chromium(profile, "--screenshot=" + png, "--window-size=1000,1400", url);
    BufferedImage image = ImageIO.read(png.toFile());
    int background = image.getRGB(2, 2);
    long drawn = 0;
    long verdictRed = 0;
    for (int y = 0; y < image.getHeight(); y++) {
      for (int x = 0; x < image.getWidth(); x++) {
        int rgb = image.getRGB(x, y) & 0xffffff;
        drawn += rgb != (background & 0xffffff) ? 1 : 0;
        verdictRed += y < 600 && rgb == 0xc0392b ? 1 : 0;
      }
    }
    long pixels = (long) image.getWidth() * image.getHeight();
    assertTrue(drawn > pixels / 50, drawn + " of " + pixels + " pixels differ from the background");
    assertTrue(
        verdictRed > 1000, "the verdict's red frame near the top: " + verdictRed + " pixels");
  }

  @Test
  void theIncidentCommandWritesTheSamePageToANewFileAndNeverOverwrites() throws Exception {
    Path out = work.resolve("cli-" + System.nanoTime() + ".html");
    ForkedJvm.Result r = new ForkedJvm().cli("incident", bundle.toString(), "-o", out.toString());
    assertEquals(0, r.exitCode, r.toString());
    assertEquals(out.toString(), r.stdout.trim());
    assertEquals("rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(out)));
    String verdict = between(Files.readString(out), "<section id=\"verdict\">", "</section>");
    assertTrue(verdict.contains("IncidentBundleChild.java:" + plantedLine), verdict);
    ForkedJvm.Result again =
        new ForkedJvm().cli("incident", bundle.toString(), "-o", out.toString());
    assertEquals(1, again.exitCode, again.toString());
    assertTrue(again.stderr.contains(out + " exists"), again.toString());
  }

  /** Runs headless Chromium once; returns its standard output. */
  private static String chromium(Path profile, String... args) throws Exception {
    return Chromium.run(work, profile, args);
  }

  private static String value(ForkedJvm.Result r, String key) {
    Matcher m = Pattern.compile("^" + key + " (.*)$", Pattern.MULTILINE).matcher(r.stdout);
    assertTrue(m.find(), key + " missing: " + r);
    return m.group(1);
  }

  private static String between(String text, String from, String to) throws IOException {
    int start = text.indexOf(from);
    assertTrue(start >= 0, from + " missing");
    return text.substring(start, text.indexOf(to, start));
  }
}
