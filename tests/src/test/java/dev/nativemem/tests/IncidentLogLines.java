package dev.nativemem.tests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.jr.ob.JSON;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * The memory watch's verdict block in a JVM's log (its standard error): the lines starting {@code
 * nativemem-incident: }, the one {@code nativemem-incident-json: } line per bundle, checked against
 * the bundle's own files.
 */
final class IncidentLogLines {
  static final String PREFIX = "nativemem-incident: ";
  static final String JSON_PREFIX = "nativemem-incident-json: ";

  final List<String> human = new ArrayList<>();
  final List<String> json = new ArrayList<>();

  /**
   * The bytes of the block (its human lines and JSON line, newlines included) before "complete".
   */
  final int blockBytes;

  /**
   * The lines of {@code log} about {@code bundle} alone: its block (from the line after the
   * previous block's JSON line to its own JSON line) and its "bundle complete" line.
   */
  static IncidentLogLines of(String log, Path bundle) {
    List<String> block = new ArrayList<>();
    List<String> ours = new ArrayList<>();
    for (String line : log.split("\n")) {
      if (line.startsWith(PREFIX + "bundle complete: ")) {
        if (line.startsWith(PREFIX + "bundle complete: " + bundle + " (")) {
          ours.add(line);
        }
      } else if (line.startsWith(JSON_PREFIX)) {
        if (line.contains("\"bundle\":\"" + bundle + "\"")) {
          ours.addAll(block);
          ours.add(line);
        }
        block.clear();
      } else if (line.startsWith(PREFIX)) {
        block.add(line);
      }
    }
    return new IncidentLogLines(String.join("\n", ours));
  }

  IncidentLogLines(String log) {
    int bytes = 0;
    for (String line : log.split("\n")) {
      if (line.startsWith(PREFIX)) {
        human.add(line);
        if (!line.startsWith(PREFIX + "bundle complete: ")) {
          bytes += line.getBytes(StandardCharsets.UTF_8).length + 1;
        }
      } else if (line.startsWith(JSON_PREFIX)) {
        json.add(line.substring(JSON_PREFIX.length()));
        bytes += line.getBytes(StandardCharsets.UTF_8).length + 1;
      }
    }
    this.blockBytes = bytes;
  }

  /**
   * Checks that the log has exactly one JSON line, for {@code bundle}, whose facts are the
   * bundle's: its trigger (manifest.json), the limit and usage of the newest sample
   * (timeline.json), the site with the most open handles (handles.json), which is {@code
   * plantedFrame}, and the profile's top function or why it is absent; and that the bundle was
   * announced complete. Returns the JSON line's object.
   */
  @SuppressWarnings("unchecked")
  Map<String, Object> assertMatches(Path bundle, String plantedFrame) throws IOException {
    String all = String.join("\n", human) + "\n" + json;
    assertEquals(1, json.size(), "one JSON line for one bundle: " + all);
    Map<String, Object> line = JSON.std.mapFrom(json.get(0));
    assertEquals("nativemem-incident-log/1", line.get("schema"), all);
    assertEquals(bundle.toString(), line.get("bundle"), all);
    assertTrue(
        human.contains(
            PREFIX
                + "bundle "
                + bundle
                + " (being written; a \"bundle"
                + " complete\" line follows when it is)"),
        all);
    assertTrue(
        human.stream().anyMatch(l -> l.startsWith(PREFIX + "bundle complete: " + bundle + " (")),
        all);

    Map<String, Object> manifest = json(bundle.resolve("manifest.json"));
    assertEquals(((Number) manifest.get("pid")).longValue(), number(line, "pid"));
    Map<String, Object> trigger = (Map<String, Object>) manifest.get("trigger");
    assertEquals(trigger, line.get("trigger"), all);

    List<Map<String, Object>> samples =
        (List<Map<String, Object>>) json(bundle.resolve("timeline.json")).get("samples");
    Map<String, Object> newest = null;
    for (Map<String, Object> s : samples) {
      if (s.get("limit") != null && s.get("usage") != null) {
        newest = s;
      }
    }
    assertNotNull(newest, "the timeline has the cgroup limit");
    long limit = number(newest, "limit");
    long usage = number(newest, "usage");
    assertEquals(limit, number(line, "limit_bytes"), all);
    assertEquals(usage, number(line, "usage_bytes"), all);
    assertEquals(limit - usage, number(line, "headroom_bytes"), all);
    String headroom = String.format("%.1f%%", 100.0 * (limit - usage) / limit);
    assertTrue(human.stream().anyMatch(l -> l.contains(", " + headroom + " of the ")), all);

    Map<String, Object> biggest = null;
    for (Map<String, Object> site :
        (List<Map<String, Object>>) json(bundle.resolve("handles.json")).get("sites")) {
      // The site with the most open handles among those with a creation line: at the agent's
      // default level the others are counted at a site with no line.
      if (site.get("created_at") != null
          && (biggest == null || number(site, "open") > number(biggest, "open"))) {
        biggest = site;
      }
    }
    Map<String, Object> open = (Map<String, Object>) line.get("top_open_site");
    assertNotNull(open, all);
    assertEquals(biggest.get("created_at"), open.get("created_at"), all);
    assertEquals(number(biggest, "open"), number(open, "open"), all);
    assertTrue(((String) open.get("created_at")).endsWith(plantedFrame), open.toString());
    assertTrue(
        human.stream().anyMatch(l -> l.contains(" open, created by ") && l.contains(plantedFrame)),
        all);

    Path report = bundle.resolve("profile-report.json");
    Map<String, Object> absent = (Map<String, Object>) line.get("absent");
    if (Files.exists(report)) {
      List<Map<String, Object>> flat = (List<Map<String, Object>>) json(report).get("top_flat");
      Map<String, Object> top = (Map<String, Object>) line.get("top_function");
      assertEquals(flat.get(0).get("name"), top.get("name"), all);
      assertEquals(flat.get(0).get("flat_bytes"), top.get("flat_bytes"), all);
    } else {
      assertTrue(((String) absent.get("profile")).startsWith("heap profile: "), all);
      assertTrue(human.contains(PREFIX + "absent: " + absent.get("profile")), all);
    }
    return line;
  }

  private static long number(Map<String, Object> json, String key) {
    return ((Number) json.get(key)).longValue();
  }

  private static Map<String, Object> json(Path file) throws IOException {
    return JSON.std.mapFrom(Files.readString(file));
  }
}
