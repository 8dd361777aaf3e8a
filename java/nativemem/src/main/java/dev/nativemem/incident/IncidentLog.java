package dev.nativemem.incident;

import dev.nativemem.base.text.TerminalText;
import dev.nativemem.internal.ByteFormat;
import dev.nativemem.internal.Json;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;

/**
 * The verdict of an incident bundle for the JVM's log, so that it outlives the pod and its volumes
 * through the cluster's log pipeline: a few lines for people, each starting with {@value #PREFIX},
 * then exactly one line {@value #JSON_PREFIX} followed by a JSON object of schema {@value #SCHEMA}
 * for machines. The memory watch writes it to the process's standard error at every capture, as
 * soon as the parts the verdict reads are in the bundle, and a line {@value #PREFIX}{@code bundle
 * complete: <path>} once the bundle is renamed into place.
 *
 * <p>The facts are {@link Verdict}'s, the page's own, computed once from the bundle's files. The
 * block is bounded: each string from the bundle is cut at {@value #MAX_TEXT} characters, at most
 * {@value #MAX_KNOWN_LINES} known leaks are written out in the human lines (all are in the JSON, by
 * id), and control characters of strings from the bundle (frames, thread names) are escaped in the
 * human lines ({@code \x1b}), as JSON escapes them in the JSON line. A part the verdict could not
 * read is said absent, with why, whole up to {@value #MAX_HINT} characters (it ends with the
 * command that brings the part, never cut in the middle).
 *
 * <pre>{@code
 * nativemem-incident: incident in pid 4242 on host tm-1 at 2026-12-01T22:50:01.123Z
 * nativemem-incident: headroom 66.0 MiB, 12.9% of the 512.0 MiB limit (usage 446.0 MiB)
 * nativemem-incident: 11,234 Inflater open, created by com.example.Loader.read(Loader.java:42).
 * nativemem-incident: absent: heap profile: heap profiling cannot run here: ...
 * nativemem-incident: Captured on the limit trigger: usage 87.1% of the 512.0 MiB limit.
 * nativemem-incident: bundle /data/incidents/nativemem-incident-4242-20261201T225001Z-limit (...)
 * nativemem-incident-json: {"schema":"nativemem-incident-log/1","pid":4242,...}
 * }</pre>
 */
public final class IncidentLog {
  /** The start of every human line. */
  public static final String PREFIX = "nativemem-incident: ";

  /** The start of the one JSON line. */
  public static final String JSON_PREFIX = "nativemem-incident-json: ";

  /** The JSON line's {@code schema}. */
  public static final String SCHEMA = "nativemem-incident-log/1";

  /** The most characters of one string from the bundle that reach the log. */
  static final int MAX_TEXT = 240;

  /**
   * The most characters of a reason a part is absent: such a reason ends with the command that
   * brings the part (the preload allocator's lines), which is never cut in the middle.
   */
  static final int MAX_HINT = 1000;

  /** Known leaks written out as sentences; the JSON line names every one. */
  static final int MAX_KNOWN_LINES = 3;

  /** Known leaks the JSON line names. */
  static final int MAX_KNOWN_JSON = 20;

  private IncidentLog() {}

  /**
   * The block for the bundle being written in {@code bundleDir}, which will be (or is) {@code
   * bundlePath}. Never throws for a damaged bundle: a verdict that cannot be computed gives a block
   * saying why, with its JSON line.
   *
   * @throws NullPointerException if an argument is null
   */
  public static String render(Path bundleDir, Path bundlePath) {
    Objects.requireNonNull(bundleDir, "bundleDir");
    Objects.requireNonNull(bundlePath, "bundlePath");
    try {
      Bundle bundle = new Bundle(bundleDir, Bundle.VERDICT_FILES);
      return render(bundle, Verdict.of(bundle), bundlePath);
    } catch (Exception | OutOfMemoryError e) {
      return failed(bundlePath, e);
    }
  }

  private static String render(Bundle bundle, Verdict verdict, Path bundlePath) {
    StringBuilder out = new StringBuilder(2048);
    Map<String, Object> manifest = bundle.manifest();
    Long pid = Fields.whole(manifest, "pid");
    line(
        out,
        "incident in pid "
            + (pid == null ? "?" : pid)
            + " on host "
            + PLAIN.text(Fields.string(manifest, "host"))
            + " at "
            + PLAIN.text(Fields.string(manifest, "captured_at")));
    line(out, headroom(verdict));
    List<String> lines = verdict.lines(PLAIN);
    int known = 0;
    for (String sentence : lines) {
      if (sentence.startsWith("Known leak ") && ++known > MAX_KNOWN_LINES) {
        continue;
      }
      line(out, sentence);
    }
    if (known > MAX_KNOWN_LINES) {
      line(
          out,
          (known - MAX_KNOWN_LINES)
              + " more known leak"
              + (known - MAX_KNOWN_LINES == 1 ? "" : "s")
              + ": the JSON line names them; handles.json in the bundle has them whole.");
    }
    for (String why : verdict.absent.values()) {
      line(out, "absent: " + escape(hint(why)));
    }
    line(
        out,
        "bundle "
            + escape(bundlePath.toString())
            + " (being written; a \"bundle complete\" line follows when it is)");
    out.append(JSON_PREFIX).append(jsonLine(json(bundle, verdict, bundlePath)));
    return out.append('\n').toString();
  }

  /** The line written once the bundle is in place, {@code millis} after its capture began. */
  public static String completed(Path bundlePath, long millis) {
    return PREFIX
        + "bundle complete: "
        + escape(bundlePath.toString())
        + " (captured in "
        + millis
        + " ms)\n";
  }

  /** The line written when a bundle announced in the log could not be finished. */
  public static String notWritten(Path bundlePath, Throwable why) {
    return PREFIX
        + "bundle not written: "
        + escape(bundlePath.toString())
        + ": "
        + PLAIN.text(String.valueOf(why))
        + "\n";
  }

  private static String headroom(Verdict verdict) {
    Verdict.Headroom h = verdict.headroom;
    if (h == null) {
      return verdict.absent.containsKey("timeline")
          ? "headroom unknown: no timeline"
          : "headroom unknown: the timeline has no memory cgroup limit (see the manifest's basis)";
    }
    return "headroom "
        + ByteFormat.human(h.bytes())
        + ", "
        + String.format(Locale.ROOT, "%.1f%%", h.share() * 100)
        + " of the "
        + ByteFormat.human(h.limit)
        + " limit (usage "
        + ByteFormat.human(h.usage)
        + ")";
  }

  private static Map<String, Object> json(Bundle bundle, Verdict verdict, Path bundlePath) {
    Map<String, Object> manifest = bundle.manifest();
    Map<String, Object> json = new LinkedHashMap<>();
    json.put("schema", SCHEMA);
    json.put("pid", Fields.whole(manifest, "pid"));
    json.put("host", cut(Fields.string(manifest, "host")));
    json.put("captured_at", cut(Fields.string(manifest, "captured_at")));
    Map<String, Object> trigger = new LinkedHashMap<>();
    trigger.put("kind", cut(verdict.triggerKind));
    trigger.put("detail", cut(verdict.triggerDetail));
    trigger.put(
        "threshold_percent",
        Fields.number(Fields.object(manifest, "trigger"), "threshold_percent"));
    json.put("trigger", trigger);
    Verdict.Headroom h = verdict.headroom;
    json.put("headroom_bytes", h == null ? null : h.bytes());
    json.put("headroom_share", h == null ? null : Math.round(h.share() * 10_000) / 10_000.0);
    json.put("limit_bytes", h == null ? null : h.limit);
    json.put("usage_bytes", h == null ? null : h.usage);
    Verdict.TopFunction top = verdict.topFunction;
    Map<String, Object> function = null;
    if (top != null) {
      function = new LinkedHashMap<>();
      function.put("name", cut(top.name));
      function.put("flat_share", top.share);
      function.put("flat_bytes", top.bytes);
      function.put("total_bytes", top.total);
    }
    json.put("top_function", function);
    json.put("top_leaked_site", site(verdict.mostLeaked));
    json.put("top_open_site", site(verdict.mostOpen));
    List<Object> known = new ArrayList<>();
    for (Verdict.KnownLeak leak : verdict.knownLeaks) {
      if (known.size() == MAX_KNOWN_JSON) {
        break;
      }
      Map<String, Object> k = new LinkedHashMap<>();
      k.put("id", cut(leak.id));
      k.put("library", cut(leak.library));
      k.put("fixed_in", cut(leak.fixedIn));
      k.put("link", cut(leak.link));
      known.add(k);
    }
    json.put("known_leaks", known);
    Map<String, Object> absent = new LinkedHashMap<>();
    verdict.absent.forEach((part, why) -> absent.put(part, hint(why)));
    json.put("absent", absent);
    json.put("bundle", bundlePath.toString());
    return json;
  }

  private static Map<String, Object> site(Verdict.Site site) {
    if (site == null) {
      return null;
    }
    Map<String, Object> json = new LinkedHashMap<>();
    json.put("kind", cut(site.kind));
    json.put("leaked", site.leaked);
    json.put("open", site.open);
    json.put("created_at", cut(site.createdAt));
    json.put("known_id", cut(site.knownId));
    json.put("without_stack", site.unrecorded);
    return json;
  }

  private static String failed(Path bundlePath, Throwable e) {
    String why = "the verdict could not be computed: " + e;
    Map<String, Object> json = new LinkedHashMap<>();
    json.put("schema", SCHEMA);
    Map<String, Object> absent = new LinkedHashMap<>();
    absent.put("verdict", cut(why));
    json.put("absent", absent);
    json.put("bundle", bundlePath.toString());
    return PREFIX
        + "absent: "
        + PLAIN.text(why)
        + "\n"
        + PREFIX
        + "bundle "
        + escape(bundlePath.toString())
        + "\n"
        + JSON_PREFIX
        + jsonLine(json)
        + "\n";
  }

  /**
   * {@code json} on one line, with the characters JSON leaves raw but a terminal acts on (DEL, C1
   * controls, line and paragraph separators, bidirectional overrides) written as {@code \\u}
   * escapes: outside strings JSON text is ASCII, so only string contents change, not their value.
   */
  static String jsonLine(Map<String, Object> json) {
    String text = Json.writeWithNulls(json);
    StringBuilder out = new StringBuilder(text.length() + 16);
    for (int i = 0; i < text.length(); i++) {
      char c = text.charAt(i);
      if (c < 0x20 || TerminalText.actsOnATerminal(c)) {
        out.append(String.format(Locale.ROOT, "\\u%04x", (int) c));
      } else {
        out.append(c);
      }
    }
    return out.toString();
  }

  private static void line(StringBuilder out, String text) {
    out.append(PREFIX).append(text).append('\n');
  }

  /** {@code value} cut at {@link #MAX_TEXT} characters (never inside a surrogate pair). */
  private static String cut(String value) {
    if (value == null || value.length() <= MAX_TEXT) {
      return value;
    }
    int end = Character.isHighSurrogate(value.charAt(MAX_TEXT - 1)) ? MAX_TEXT - 1 : MAX_TEXT;
    return value.substring(0, end) + "...";
  }

  /**
   * A reason a part is absent, whole up to {@link #MAX_HINT} characters; a longer one ends at its
   * last whole sentence within that bound, so that a command it gives is whole or not there.
   */
  static String hint(String value) {
    if (value == null || value.length() <= MAX_HINT) {
      return value;
    }
    int end = value.lastIndexOf(". ", MAX_HINT - 1);
    return (end > 0 ? value.substring(0, end + 1) : cut(value))
        + " (the rest is in the bundle's manifest.json)";
  }

  /**
   * {@code value} for a human line: the backslash doubled, so that the line reads back exactly,
   * then what could end the line early or drive a terminal as {@link TerminalText#escapeLine} shows
   * it; nothing cut (for paths we name ourselves).
   */
  private static String escape(String value) {
    return TerminalText.escapeLine(value.replace("\\", "\\\\"));
  }

  /**
   * Plain text for a log line: strings from the bundle cut at {@link #MAX_TEXT} characters, with
   * every character that could end the line early or drive a terminal (C0 and C1 controls, DEL, the
   * Unicode line and paragraph separators, bidirectional overrides) and the backslash written as an
   * escape ({@code \x1b}, {@code \\u2028}, {@code \\}).
   */
  static final Verdict.Markup PLAIN =
      new Verdict.Markup() {
        @Override
        public String text(String fromBundle) {
          return fromBundle == null ? "" : escape(cut(fromBundle));
        }

        @Override
        public String strong(String formatted) {
          return formatted;
        }

        @Override
        public String code(String escaped) {
          return escaped;
        }
      };
}
