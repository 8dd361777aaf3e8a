package dev.nativemem.incident;

import dev.nativemem.internal.FileOwnership;
import dev.nativemem.internal.Json;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * One incident bundle as the page reads it: each file read at most once, with a size cap (a bundle
 * may come from another machine), never through a link, and only in a directory no other user can
 * change (so no file can be swapped for a link or a FIFO between the check and the read). A file
 * that is absent, too large or not JSON is not an error: {@link #whyMissing} says why, in the
 * manifest's words when it has them.
 */
final class Bundle {
  /**
   * Caps per file: far above what a bundle holds (an hour of samples at 1 s is about 1 MiB), and
   * low enough that a hostile file of tiny objects parses into at most a few hundred MiB of maps.
   */
  static final long MAX_JSON_BYTES = 8L << 20;

  static final long MAX_SVG_BYTES = 16L << 20;

  static final String FIX =
      "render a bundle from a directory of your own that no other user can write (copy it there"
          + " first, e.g. cp -r BUNDLE ~/incidents/)";

  private final Path dir;
  private final Map<String, Map<String, Object>> json = new HashMap<>();
  private final Map<String, String> problems = new LinkedHashMap<>();
  private final Map<String, Object> manifest;

  Bundle(Path dir) throws IOException {
    this.dir = dir.toAbsolutePath();
    FileOwnership.requireOwnDirectory(this.dir, FIX);
    FileOwnership.requireNoOtherWriterAbove(this.dir, FIX);
    Map<String, Object> m = json("manifest.json");
    this.manifest = m == null ? Collections.emptyMap() : m;
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
    byte[] bytes = read(name, MAX_JSON_BYTES);
    Map<String, Object> parsed = null;
    if (bytes != null) {
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
    byte[] bytes = read("timeline.json", MAX_JSON_BYTES);
    if (bytes == null) {
      return null;
    }
    try {
      return TimelineEdges.read(bytes, keys);
    } catch (IOException | RuntimeException e) {
      problems.put(
          "timeline.json", "timeline.json is not a JSON object: " + firstLine(e.getMessage()));
      return null;
    }
  }

  /** A file's bytes, or null with the reason kept. */
  byte[] read(String name, long maxBytes) {
    Path file = dir.resolve(name);
    try {
      if (Files.isSymbolicLink(file)) {
        return refuse(name, name + " is a symbolic link; the page reads no file through a link");
      }
      if (!Files.isRegularFile(file, LinkOption.NOFOLLOW_LINKS)) {
        return Files.exists(file, LinkOption.NOFOLLOW_LINKS)
            ? refuse(name, name + " is not a regular file")
            : refuse(name, null);
      }
      try (InputStream in = Files.newInputStream(file, LinkOption.NOFOLLOW_LINKS)) {
        byte[] bytes = in.readNBytes((int) Math.min(maxBytes + 1, Integer.MAX_VALUE - 8));
        if (bytes.length > maxBytes) {
          return refuse(name, name + " is larger than " + Html.bytes(maxBytes) + "; not read");
        }
        return bytes;
      }
    } catch (NoSuchFileException e) {
      return refuse(name, null);
    } catch (IOException e) {
      return refuse(name, "cannot read " + name + ": " + e.getMessage());
    }
  }

  private byte[] refuse(String name, String problem) {
    problems.put(name, problem);
    return null;
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
