package dev.nativemem.incident;

import dev.nativemem.base.NativeMemoryException;
import dev.nativemem.incident.layout.BundleLayout;
import dev.nativemem.internal.NewFiles;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;

/**
 * The incident page: one self-contained HTML file (inline CSS and SVG, no script, no network)
 * rendered from an incident bundle, for someone paged at 3 a.m.: the verdict first, then the
 * timeline, the breakdown, the top sites and flame graph, growth since the previous bundle, the
 * handles, the advice and what could not be captured.
 *
 * <p>A bundle may come from another machine: every file is read with a size cap and never through a
 * link, every string from it is HTML-escaped, the flame graph is shown as an image (a browser runs
 * no script inside an image), and the page's Content-Security-Policy allows no script and no fetch
 * at all. A missing or unreadable file gives a "not captured" line with the manifest's reason,
 * never an exception.
 *
 * <pre>{@code
 * Path page = IncidentPage.write(Path.of("/var/tmp/nativemem/nativemem-incident-123-...-limit"));
 * }</pre>
 */
public final class IncidentPage {
  /** The page's name inside a bundle. */
  public static final String FILE_NAME = BundleLayout.PAGE;

  private static final String CSP =
      "default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none';"
          + " form-action 'none'";

  private static final String STYLE =
      "body{font:15px/1.45 system-ui,sans-serif;margin:24px auto;max-width:1000px;color:#1b1b1b;"
          + "background:#fafafa;padding:0 16px}"
          + "h1{font-size:22px;margin:0 0 4px}h2{font-size:18px;margin:28px 0 8px;"
          + "border-bottom:1px solid #ccc}.meta{color:#555;margin:0 0 16px}"
          + "#verdict{background:#fff3f0;border:2px solid #c0392b;border-radius:6px;"
          + "padding:12px 18px;font-size:17px}#verdict li{margin:4px 0}"
          + "table{border-collapse:collapse;background:#fff;margin:6px 0}"
          + "th,td{border:1px solid #ddd;padding:4px 8px;text-align:left;vertical-align:top}"
          + "td.n{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}"
          + "code,pre{font:13px ui-monospace,monospace}td code{overflow-wrap:anywhere}.sub{padding-left:1.2em}pre{white-space:pre-wrap;margin:4px 0}"
          + ".missing{color:#8a4b00;background:#fff8e6;padding:6px 10px;border-left:4px solid"
          + " #e0a100}.legend{list-style:none;padding:0;display:flex;gap:18px;flex-wrap:wrap}"
          + ".swatch{display:inline-block;width:14px;height:4px;margin-right:6px;"
          + "vertical-align:middle}svg .grid{stroke:#eee}svg .frame{stroke:#999}"
          + "svg .tick,svg .axis{font:12px sans-serif;fill:#444}"
          + "svg .series{fill:none;stroke-width:2}img.flame{max-width:100%;border:1px solid #ddd}"
          + ".sev-critical,.sev-warning{color:#b03a2e;font-weight:bold}";

  /** The largest text file shown as it is (an NMT summary is a few KiB). */
  private static final long MAX_TEXT_BYTES = 1L << 20;

  /** The files the page reads, with their caps in bytes. */
  private static final Map<String, Long> FILES =
      Map.of(
          BundleLayout.TIMELINE, Bundle.MAX_JSON_BYTES,
          BundleLayout.SNAPSHOT, Bundle.MAX_JSON_BYTES,
          BundleLayout.NMT_TEXT, MAX_TEXT_BYTES,
          BundleLayout.PROFILE_SITES, Bundle.MAX_JSON_BYTES,
          BundleLayout.PROFILE_FLAME_GRAPH, Bundle.MAX_SVG_BYTES,
          BundleLayout.PROFILE_DIFF, Bundle.MAX_JSON_BYTES,
          BundleLayout.HANDLES, Bundle.MAX_JSON_BYTES,
          BundleLayout.ADVICE, Bundle.MAX_JSON_BYTES);

  /** Rows shown per table: a report's top sites, handle sites, advice. */
  private static final int MAX_ROWS = 50;

  private IncidentPage() {}

  /**
   * Renders the page of the bundle in {@code bundleDir}.
   *
   * @throws NullPointerException if {@code bundleDir} is null
   * @throws NativeMemoryException if {@code bundleDir} is not a directory of this user that no
   *     other user can write (a bundle from elsewhere: copy it into one first) or cannot be read
   */
  public static String render(Path bundleDir) {
    Objects.requireNonNull(bundleDir, "bundleDir");
    Bundle bundle;
    try {
      bundle = new Bundle(bundleDir, FILES);
    } catch (IOException e) {
      throw new NativeMemoryException("cannot read the incident bundle " + bundleDir + ": " + e, e);
    }
    return render(bundle);
  }

  private static String render(Bundle bundle) {
    Html html = new Html();
    Map<String, Object> manifest = bundle.manifest();
    html.raw("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">")
        .raw("<meta http-equiv=\"Content-Security-Policy\" content=\"" + CSP + "\">")
        .raw("<meta name=\"viewport\" content=\"width=device-width\">")
        .raw("<title>nativemem incident")
        .esc(title(manifest))
        .raw("</title><style>" + STYLE + "</style></head>\n<body>\n")
        .raw("<h1>Native memory incident")
        .esc(title(manifest))
        .raw("</h1>\n<p class=\"meta\">")
        .esc(metaLine(manifest))
        .raw("</p>\n<section id=\"verdict\"><ul>");
    List<String> verdict = Verdict.of(bundle).lines(Verdict.Markup.HTML);
    if (verdict.isEmpty()) {
      verdict =
          List.of(
              "No verdict: the bundle holds no timeline, heap profile or handle report to compute"
                  + " one from (see \"Could not capture\" below).");
    }
    for (String line : verdict) {
      html.raw("<li>").raw(line).raw("</li>");
    }
    html.raw("</ul></section>\n");
    timeline(bundle, html);
    breakdown(bundle, html);
    profile(bundle, html);
    growth(bundle, html);
    handles(bundle, html);
    advice(bundle, html);
    capture(bundle, html);
    return html.raw("</body></html>\n").toString();
  }

  /**
   * Renders the page and writes it into the bundle as {@value #FILE_NAME} (temporary name, mode
   * 0600, renamed into place); if the bundle already has a page, beside it under a new name, since
   * nativemem never overwrites a file.
   *
   * @return the page written
   * @throws NativeMemoryException if the bundle directory is not this user's alone, or writing
   *     fails
   */
  public static Path write(Path bundleDir) {
    String page = render(bundleDir);
    Path target = bundleDir.toAbsolutePath().resolve(FILE_NAME);
    try {
      return NewFiles.writeFreeName(target, page.getBytes(StandardCharsets.UTF_8), "incident page");
    } catch (IOException e) {
      throw new NativeMemoryException("cannot write " + target + ": " + e, e);
    }
  }

  private static String title(Map<String, Object> manifest) {
    Long pid = Fields.whole(manifest, "pid");
    String host = Fields.string(manifest, "host");
    return (pid == null ? "" : " — pid " + pid) + (host == null ? "" : " on " + host);
  }

  private static String metaLine(Map<String, Object> manifest) {
    List<String> parts = new ArrayList<>();
    String at = Fields.string(manifest, "captured_at");
    parts.add("captured " + (at == null ? "at an unknown time" : at));
    Long ms = Fields.whole(manifest, "capture_ms");
    if (ms != null) {
      parts.add("capture took " + Html.duration(ms));
    }
    String jvm = Fields.string(manifest, "jvm");
    if (jvm != null) {
      parts.add("JVM " + jvm);
    }
    String version = Fields.string(manifest, "nativemem");
    if (version != null) {
      parts.add("nativemem " + version);
    }
    return String.join(" · ", parts);
  }

  private static void timeline(Bundle bundle, Html html) {
    html.raw("<h2 id=\"timeline\">Timeline</h2>\n");
    Map<String, Object> timeline = bundle.json(BundleLayout.TIMELINE);
    List<Map<String, Object>> samples = Fields.objects(timeline, "samples");
    String chart = timeline == null ? null : TimelineChart.render(samples);
    if (chart == null) {
      html.notCaptured(
          timeline == null
              ? bundle.whyMissing(BundleLayout.TIMELINE, "timeline")
              : "timeline: fewer than two samples (" + samples.size() + ")");
      return;
    }
    Long interval = Fields.whole(timeline, "interval_ms");
    html.raw("<p>")
        .raw(Html.count(samples.size()))
        .raw(" samples")
        .raw(interval == null ? "" : ", one every " + Html.duration(interval))
        .raw(
            samples.size() > TimelineChart.MAX_POINTS
                ? "; the chart draws one sample in "
                    + Html.count(
                        (samples.size() + TimelineChart.MAX_POINTS - 1) / TimelineChart.MAX_POINTS)
                : "")
        .raw(".</p>")
        .raw(TimelineChart.legend(samples))
        .raw(chart)
        .raw("\n");
  }

  private static void breakdown(Bundle bundle, Html html) {
    html.raw("<h2 id=\"breakdown\">Breakdown</h2>\n");
    Map<String, Object> snapshot = bundle.json(BundleLayout.SNAPSHOT);
    Map<String, Object> breakdown = Fields.object(snapshot, "breakdown");
    if (breakdown == null) {
      html.notCaptured(bundle.whyMissing(BundleLayout.SNAPSHOT, "breakdown"));
      return;
    }
    List<List<String>> rows = new ArrayList<>();
    rows.add(row("<b>RSS</b>", Fields.whole(breakdown, "rss_bytes"), breakdown, "rss_bytes"));
    for (Map<String, Object> part : Fields.objects(breakdown, "attributed")) {
      Long bytes = Fields.whole(part, "bytes");
      String name = "<span class=\"sub\">" + Html.text(Fields.string(part, "name")) + "</span>";
      rows.add(row(name, bytes, breakdown, "rss_bytes"));
    }
    rows.add(
        row("unaccounted", Fields.whole(breakdown, "unaccounted_bytes"), breakdown, "rss_bytes"));
    Map<String, Object> container = Fields.object(breakdown, "container");
    rows.add(row("cgroup usage", Fields.whole(container, "usage_bytes"), breakdown, "limit_bytes"));
    rows.add(row("limit", Fields.whole(breakdown, "limit_bytes"), null, null));
    rows.add(row("headroom", Fields.whole(breakdown, "headroom_bytes"), breakdown, "limit_bytes"));
    Map<String, Object> jvm = Fields.object(breakdown, "jvm");
    rows.add(row("Java heap used", Fields.whole(jvm, "heap_used_bytes"), null, null));
    rows.add(row("Java heap committed", Fields.whole(jvm, "heap_committed_bytes"), null, null));
    html.raw("<p>As of ")
        .esc(Fields.string(snapshot, "taken_at"))
        .raw(" (view: ")
        .esc(Fields.string(breakdown, "view"))
        .raw(").</p>")
        .table("breakdown-table", Arrays.asList("part", "bytes", "share"), rows);
    byte[] nmt = bundle.read(BundleLayout.NMT_TEXT);
    if (nmt != null) {
      html.raw("<details><summary>NMT summary (the JVM's own account)</summary><pre>")
          .esc(new String(nmt, StandardCharsets.UTF_8))
          .raw("</pre></details>");
    }
    Map<String, Object> stats = Fields.object(snapshot, "stats");
    if (stats != null) {
      List<List<String>> statRows = new ArrayList<>();
      for (Map.Entry<String, Object> e : stats.entrySet()) {
        Long value = Fields.whole(stats, e.getKey());
        if (value != null) {
          boolean bytes = e.getKey().endsWith("_bytes");
          statRows.add(
              Arrays.asList(
                  "<code>" + Html.text(e.getKey()) + "</code>",
                  "<span class=\"n\">"
                      + (bytes ? Html.bytes(value) : Html.count(value))
                      + "</span>"));
        }
      }
      html.raw("<p>Allocator: <b>")
          .esc(Fields.string(stats, "kind"))
          .raw("</b></p>")
          .table("allocator-table", Arrays.asList("statistic", "value"), statRows);
    }
  }

  /** A row of a byte figure and its share of {@code of[ofKey]} when both are known. */
  private static List<String> row(String label, Long bytes, Map<String, Object> of, String ofKey) {
    Long whole = ofKey == null ? null : Fields.whole(of, ofKey);
    String share =
        bytes == null || whole == null || whole <= 0 ? "" : Html.percent(bytes / (double) whole);
    return Arrays.asList(label, Html.bytes(bytes), share);
  }

  private static void profile(Bundle bundle, Html html) {
    html.raw("<h2 id=\"top-sites\">Top sites of the sampled native heap</h2>\n");
    Map<String, Object> report = bundle.json(BundleLayout.PROFILE_SITES);
    if (report == null) {
      html.notCaptured(bundle.whyMissing(BundleLayout.PROFILE_SITES, "heap profile"));
    } else {
      sites(report, "top-sites-table", html);
    }
    html.raw("<h2 id=\"flame\">Flame graph</h2>\n");
    byte[] svg = bundle.read(BundleLayout.PROFILE_FLAME_GRAPH);
    if (svg == null) {
      html.notCaptured(bundle.whyMissing(BundleLayout.PROFILE_FLAME_GRAPH, "heap profile"));
    } else {
      // As an image: a browser runs no script and loads nothing an image's SVG asks for.
      html.raw("<img class=\"flame\" alt=\"flame graph of the sampled native heap\" src=\"")
          .raw("data:image/svg+xml;base64,")
          .raw(Base64.getEncoder().encodeToString(svg))
          .raw("\">\n");
    }
  }

  private static void growth(Bundle bundle, Html html) {
    html.raw("<h2 id=\"growth\">Growth since the previous bundle</h2>\n");
    String previous = Fields.string(bundle.manifest(), "previous_bundle");
    Map<String, Object> diff = bundle.json(BundleLayout.PROFILE_DIFF);
    if (diff == null) {
      html.notCaptured(
          previous == null
              ? "growth: this is the first bundle (no previous bundle to compare with)"
              : bundle.whyMissing(BundleLayout.PROFILE_DIFF, "profile diff"));
      return;
    }
    html.raw("<p>Against <code>").esc(previous).raw("</code>.</p>");
    sites(diff, "growth-table", html);
  }

  /** A profile report's top flat sites, its totals and warnings. */
  private static void sites(Map<String, Object> report, String id, Html html) {
    html.raw("<p>Sampled in use: <b>")
        .raw(Html.bytes(Fields.whole(report, "total_bytes")))
        .raw("</b> in ")
        .raw(Html.count(Fields.count(report, "total_objects")))
        .raw(" objects; one sample per ")
        .raw(Html.bytes(Fields.whole(report, "sample_interval_bytes")))
        .raw(" allocated (figures unbiased as jeprof does).</p>");
    List<List<String>> rows = new ArrayList<>();
    List<Map<String, Object>> flatSites = new ArrayList<>();
    for (Map<String, Object> site : Fields.objects(report, "top_flat")) {
      // Functions that allocate nothing themselves are the flame graph's business.
      if (Fields.count(site, "flat_bytes") != 0) {
        flatSites.add(site);
      }
    }
    for (Map<String, Object> site : limit(flatSites)) {
      Double flat = Fields.number(site, "flat_share");
      Double cumulative = Fields.number(site, "cumulative_share");
      rows.add(
          Arrays.asList(
              "<code>" + Html.text(Fields.string(site, "name")) + "</code>",
              Html.bytes(Fields.whole(site, "flat_bytes")),
              flat == null ? "" : Html.percent(flat),
              Html.bytes(Fields.whole(site, "cumulative_bytes")),
              cumulative == null ? "" : Html.percent(cumulative)));
    }
    html.table(
        id,
        Arrays.asList("function", "flat bytes", "flat %", "cumulative bytes", "cumulative %"),
        rows);
    for (String warning : Fields.strings(report, "warnings")) {
      html.raw("<p class=\"missing\">").esc(warning).raw("</p>");
    }
  }

  private static void handles(Bundle bundle, Html html) {
    html.raw("<h2 id=\"handles\">Open and leaked native handles</h2>\n");
    Map<String, Object> report = bundle.json(BundleLayout.HANDLES);
    if (report == null) {
      html.notCaptured(bundle.whyMissing(BundleLayout.HANDLES, "handle report"));
      return;
    }
    if (!Boolean.TRUE.equals(report.get("agent_active"))) {
      html.raw(
          "<p class=\"missing\">The nativemem agent was not attached: RocksDB and zlib"
              + " handles were not tracked.</p>");
    }
    List<List<String>> kinds = new ArrayList<>();
    for (Map<String, Object> k : Fields.objects(report, "kinds")) {
      kinds.add(
          Arrays.asList(
              Html.text(Fields.string(k, "kind")),
              Html.count(Fields.count(k, "created")),
              Html.count(Fields.count(k, "closed")),
              Html.count(Fields.count(k, "open")),
              Html.count(Fields.count(k, "leaked"))));
    }
    html.table(
        "handle-kinds-table", Arrays.asList("kind", "created", "closed", "open", "leaked"), kinds);
    List<List<String>> sites = new ArrayList<>();
    for (Map<String, Object> s : limit(Fields.objects(report, "sites"))) {
      Map<String, Object> known = Fields.object(s, "known");
      String knownText = Fields.string(s, "known_leak");
      sites.add(
          Arrays.asList(
              Html.text(Fields.string(s, "kind")),
              Html.count(Fields.count(s, "open")),
              Html.count(Fields.count(s, "pooled")),
              Html.count(Fields.count(s, "leaked")),
              createdAt(s),
              known == null && knownText == null
                  ? ""
                  : "<b>"
                      + Html.text(Fields.string(known, "id"))
                      + "</b> "
                      + Html.text(knownText)));
    }
    html.table(
        "handle-sites-table",
        Arrays.asList(
            "kind", "open", "pooled", "leaked", "created at (click for the stack)", "known leak"),
        sites);
    List<List<String>> zombies = new ArrayList<>();
    for (Map<String, Object> z : Fields.objects(report, "zombie_caches")) {
      StringBuilder retainers = new StringBuilder();
      for (Map<String, Object> r : Fields.objects(z, "retainers")) {
        retainers
            .append(Html.text(Fields.string(r, "kind")))
            .append(" (")
            .append(Html.text(Fields.string(r, "state")))
            .append(") at <code>")
            .append(Html.text(Fields.string(r, "created_at")))
            .append("</code><br>");
      }
      zombies.add(
          Arrays.asList(
              Html.text(Fields.string(z, "cache_kind")),
              Html.bytes(Fields.whole(z, "capacity_bytes")),
              "<code>" + Html.text(Fields.string(z, "cache_created_at")) + "</code>",
              retainers.toString()));
    }
    html.raw("<h3>Zombie caches (closed, still alive)</h3>");
    if (zombies.isEmpty()) {
      html.raw("<p>None.</p>");
    } else {
      html.table(
          "zombie-caches-table",
          Arrays.asList("cache", "capacity", "created at", "kept alive by"),
          zombies);
    }
  }

  /** A site's first application frame, its stack folded under it; a pool's note as it is. */
  private static String createdAt(Map<String, Object> site) {
    String at = Fields.string(site, "created_at");
    String stack = Fields.string(site, "stack");
    if (at == null) {
      return Html.text(stack);
    }
    return "<details><summary><code>"
        + Html.text(at)
        + "</code></summary><pre>"
        + Html.text(stack)
        + "</pre></details>";
  }

  private static void advice(Bundle bundle, Html html) {
    html.raw("<h2 id=\"advice\">Advice</h2>\n");
    Map<String, Object> advice = bundle.json(BundleLayout.ADVICE);
    if (advice == null) {
      html.notCaptured(bundle.whyMissing(BundleLayout.ADVICE, "advice"));
      return;
    }
    List<List<String>> rows = new ArrayList<>();
    for (Map<String, Object> a : limit(Fields.objects(advice, "advice"))) {
      String severity = Fields.string(a, "severity");
      String cssClass =
          severity == null ? "" : severity.toLowerCase(Locale.ROOT).replaceAll("[^a-z]", "");
      StringBuilder what = new StringBuilder();
      for (String key : new String[] {"title", "message", "why", "action"}) {
        String value = Fields.string(a, key);
        if (value != null) {
          what.append(Html.text(value)).append("<br>");
        }
      }
      String setting = Fields.string(a, "suggested_setting");
      rows.add(
          Arrays.asList(
              "<span class=\"sev-" + cssClass + "\">" + Html.text(severity) + "</span>",
              "<code>" + Html.text(Fields.string(a, "code")) + "</code>",
              what.toString(),
              setting == null || setting.isEmpty()
                  ? ""
                  : "<code>" + Html.text(setting) + "</code>"));
    }
    html.table("advice-table", Arrays.asList("severity", "code", "what", "do"), rows);
  }

  private static void capture(Bundle bundle, Html html) {
    html.raw("<h2 id=\"not-captured\">Could not capture</h2>\n");
    List<List<String>> missing = new ArrayList<>();
    for (Map<String, Object> m : bundle.missing()) {
      missing.add(
          Arrays.asList(Html.text(Fields.string(m, "what")), Html.text(Fields.string(m, "why"))));
    }
    if (bundle.manifest().isEmpty()) {
      html.notCaptured(bundle.whyMissing(BundleLayout.MANIFEST, "manifest"));
    } else if (missing.isEmpty()) {
      html.raw("<p>Everything was captured.</p>");
    } else {
      html.table("not-captured-table", Arrays.asList("what", "why"), missing);
    }
    List<List<String>> files = new ArrayList<>();
    for (Map<String, Object> f : Fields.objects(bundle.manifest(), "files")) {
      files.add(
          Arrays.asList(
              "<code>" + Html.text(Fields.string(f, "name")) + "</code>",
              Html.text(Fields.string(f, "what"))));
    }
    if (!files.isEmpty()) {
      html.raw("<h3>Files in this bundle</h3>")
          .table("files-table", Arrays.asList("file", "what"), files);
    }
  }

  private static <T> List<T> limit(List<T> list) {
    return list.size() <= MAX_ROWS ? list : list.subList(0, MAX_ROWS);
  }
}
