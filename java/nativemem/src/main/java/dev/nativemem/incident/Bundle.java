package dev.nativemem.incident;

import dev.nativemem.base.NativeMemoryException;
import dev.nativemem.incident.layout.BundleLayout;
import dev.nativemem.internal.ByteFormat;
import dev.nativemem.internal.Json;
import dev.nativemem.internal.NativeBridge;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * One incident bundle as the page reads it, through one directory handle opened once (no link of
 * another user followed on the way): each file opened relative to it with {@code
 * O_NOFOLLOW|O_NONBLOCK} and read only if its descriptor says it is a regular file (a link or a
 * FIFO swapped in is refused at once, never followed or waited on), at most once, with a cap per
 * file and a total bound on the JSON parsed (a bundle may come from another machine): at most
 * {@value #MAX_TOTAL_JSON_BYTES} bytes and {@value #MAX_JSON_VALUES} values of JSON in all, so a
 * bundle of any size is read in bounded memory. A file that is absent, refused, too large or not
 * JSON is not an error: {@link #whyMissing} says why, in the manifest's words when it has them.
 */
final class Bundle {
  /**
   * Caps per file: far above what a bundle holds (an hour of samples at 1 s is about 1 MiB), and
   * low enough that a hostile file of tiny objects parses into at most a few hundred MiB of maps.
   */
  static final long MAX_JSON_BYTES = 8L << 20;

  static final long MAX_SVG_BYTES = 16L << 20;

  /** JSON bytes read in all, whatever the number of files. */
  static final long MAX_TOTAL_JSON_BYTES = 16L << 20;

  /**
   * JSON values (objects, arrays, elements: counted as {@code {}, {@code [} and commas) parsed in
   * all: a map of a few entries costs the JVM about 150 bytes, so at most about 75 MiB of heap.
   */
  static final long MAX_JSON_VALUES = 500_000;

  static final String FIX =
      "render a bundle from a directory of your own that no other user can write (copy it there"
          + " first, e.g. cp -r BUNDLE ~/incidents/)";

  /** Files the verdict reads, with their caps in bytes (the manifest is always read). */
  static final Map<String, Long> VERDICT_FILES =
      Map.of(
          BundleLayout.TIMELINE, MAX_JSON_BYTES,
          BundleLayout.PROFILE_SITES, MAX_JSON_BYTES,
          BundleLayout.SNAPSHOT, MAX_JSON_BYTES,
          BundleLayout.HANDLES, MAX_JSON_BYTES);

  private final Path dir;

  /** What was read of each file asked for: its bytes, absent from the map when not read. */
  private final Map<String, byte[]> read = new HashMap<>();

  private final Map<String, Map<String, Object>> json = new HashMap<>();
  private final Map<String, String> problems = new LinkedHashMap<>();
  private final Map<String, Object> manifest;
  private long jsonBytes;
  private long jsonValues;

  /**
   * Reads the manifest and {@code files} (each name with its cap in bytes) of the bundle {@code
   * dir}, at once, through one handle of it ({@code bundle_files}, {@code
   * rust/nativemem/src/jobs/bundle_files.rs}).
   *
   * @throws IOException if the directory cannot be opened
   * @throws NativeMemoryException if it is not this user's, or other users can write it
   */
  Bundle(Path dir, Map<String, Long> files) throws IOException {
    this.dir = dir.toAbsolutePath();
    Map<String, Long> wanted = new LinkedHashMap<>();
    wanted.put(BundleLayout.MANIFEST, MAX_JSON_BYTES);
    wanted.putAll(files);
    List<Object> asked = new ArrayList<>();
    for (Map.Entry<String, Long> file : wanted.entrySet()) {
      asked.add(Map.of("name", file.getKey(), "max_bytes", file.getValue()));
    }
    Map<String, Object> answer;
    try {
      answer =
          Json.parseObject(
              NativeBridge.call(
                  "bundle_files", Map.of("path", this.dir.toString(), "files", asked)));
    } catch (RuntimeException e) {
      throw new IOException(e.getMessage() + "; " + FIX, e);
    }
    if (!Json.bool(answer, "private")) {
      throw new NativeMemoryException(
          this.dir
              + " belongs to uid "
              + Json.number(answer, "uid")
              + " with mode "
              + Long.toOctalString(Json.number(answer, "mode"))
              + ": it must be this user's and not writable by other users, who could swap its"
              + " files; "
              + FIX);
    }
    for (Map<String, Object> file : Json.objects(answer, "files")) {
      String name = Json.string(file, "name");
      String text = (String) file.get("text");
      if (text != null) {
        read.put(name, text.getBytes(StandardCharsets.UTF_8));
      } else {
        problems.put(name, problem(name, wanted.get(name), Json.optionalObject(file, "problem")));
      }
    }
    Map<String, Object> m = json(BundleLayout.MANIFEST);
    this.manifest = m == null ? Collections.emptyMap() : m;
  }

  /** Why {@code name} was not read, in the page's words; null when it is absent. */
  private static String problem(String name, long maxBytes, Map<String, Object> problem) {
    if (problem == null) {
      return null;
    }
    Object detail = problem.get("detail");
    switch (String.valueOf(problem.get("kind"))) {
      case "link":
        return name + " is a symbolic link; the page reads no file through a link";
      case "too_large":
        return name + " is larger than " + Html.bytes(maxBytes) + "; not read";
      case "not_regular":
        return name + " is not a regular file (" + name + " " + detail + ")";
      case "not_utf8":
        return name
            + (name.endsWith(".json") ? " is not a JSON object: " : " is not text: ")
            + detail;
      default:
        return "cannot read " + name + ": " + detail;
    }
  }

  Path dir() {
    return dir;
  }

  /** The manifest, or an empty map when it is absent or unreadable. */
  Map<String, Object> manifest() {
    return manifest;
  }

  /** A JSON object file of the bundle, or null (then {@link #whyMissing} says why). */
  Map<String, Object> json(String name) {
    if (json.containsKey(name) || problems.containsKey(name)) {
      return json.get(name);
    }
    byte[] bytes = read(name);
    Map<String, Object> parsed = null;
    if (bytes != null && withinBudget(name, bytes)) {
      try {
        parsed = Json.parseUntrusted(bytes);
      } catch (IOException | RuntimeException e) {
        problems.put(name, name + " is not a JSON object: " + firstLine(e.getMessage()));
      }
    }
    json.put(name, parsed);
    return parsed;
  }

  /**
   * The samples of {@code timeline.json} in which one of {@code keys} has its first or last number
   * ({@link TimelineEdges}), or null (then {@link #whyMissing} says why).
   */
  List<Map<String, Object>> timelineEdges(List<String> keys) {
    byte[] bytes = read(BundleLayout.TIMELINE);
    if (bytes == null) {
      return null;
    }
    try {
      return TimelineEdges.read(bytes, keys);
    } catch (IOException | RuntimeException e) {
      problems.put(
          BundleLayout.TIMELINE,
          BundleLayout.TIMELINE + " is not a JSON object: " + firstLine(e.getMessage()));
      return null;
    }
  }

  /**
   * Counts {@code bytes} against the bundle's JSON budget; false, with the reason kept, if over.
   */
  private boolean withinBudget(String name, byte[] bytes) {
    long values = 0;
    for (byte b : bytes) {
      if (b == '{' || b == '[' || b == ',') {
        values++;
      }
    }
    long totalBytes = jsonBytes + bytes.length;
    long totalValues = jsonValues + values;
    if (totalBytes > MAX_TOTAL_JSON_BYTES || totalValues > MAX_JSON_VALUES) {
      problems.put(
          name,
          "bundle too large: "
              + ByteFormat.human(totalBytes)
              + " of JSON ("
              + totalValues
              + " values) with "
              + name
              + ", the page reads at most "
              + ByteFormat.human(MAX_TOTAL_JSON_BYTES)
              + " and "
              + MAX_JSON_VALUES
              + " values; open "
              + dir.resolve(name)
              + " directly");
      return false;
    }
    jsonBytes = totalBytes;
    jsonValues = totalValues;
    return true;
  }

  /**
   * A file's bytes, or null (then {@link #whyMissing} says why).
   *
   * @throws IllegalStateException if {@code name} was not asked for when the bundle was read
   */
  byte[] read(String name) {
    if (!read.containsKey(name) && !problems.containsKey(name)) {
      throw new IllegalStateException(name + " was not asked for when " + dir + " was read");
    }
    return read.get(name);
  }

  /**
   * Why {@code name} (about {@code what}: "heap profile") is not shown: what we found wrong with
   * the file, else the manifest's reason for a {@code missing} entry that names the file (or its
   * stem: "handles") or the thing, else that the manifest does not say.
   */
  String whyMissing(String name, String what) {
    String problem = problems.get(name);
    if (problem != null) {
      return problem;
    }
    for (Map<String, Object> missing : missing()) {
      String item = Fields.string(missing, "what");
      String lower = item == null ? null : item.toLowerCase(Locale.ROOT);
      String wanted = what.toLowerCase(Locale.ROOT);
      String stem = name.substring(0, name.indexOf('.') < 0 ? name.length() : name.indexOf('.'));
      if (lower != null
          && (lower.contains(stem) || lower.contains(wanted) || wanted.contains(lower))) {
        String why = Fields.string(missing, "why");
        return what + ": " + (why == null ? "the manifest gives no reason" : why);
      }
    }
    return what
        + ": "
        + name
        + " is not in the bundle"
        + (manifest.isEmpty() ? " (and there is no readable manifest.json)" : "")
        + " and the manifest does not say why";
  }

  /** The manifest's "could not capture" list. */
  List<Map<String, Object>> missing() {
    return Fields.objects(manifest, "missing");
  }

  private static String firstLine(String message) {
    if (message == null) {
      return "unreadable";
    }
    int newline = message.indexOf('\n');
    String line = newline < 0 ? message : message.substring(0, newline);
    return line.length() > 200 ? line.substring(0, 200) + "..." : line;
  }
}
