package dev.nativemem.incident;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;

/**
 * The samples of a timeline that the verdict reads: for each of its keys, the first and the last
 * sample in which the key has a number. Read from {@code timeline.json} in two streaming passes
 * (where the edges are, then those samples only), so a verdict costs a few samples of memory
 * whatever the timeline's length: an hour of samples is about 1 MiB of JSON, which parsed whole
 * makes several MiB of maps.
 */
final class TimelineEdges {
  private static final JsonFactory JSON = new JsonFactory();

  private TimelineEdges() {}

  /**
   * The edge samples of {@code timeline} (a JSON object with a {@code samples} array), oldest
   * first; empty when it has no samples.
   *
   * @throws IOException if it is not a JSON object
   */
  static List<Map<String, Object>> read(byte[] timeline, List<String> keys) throws IOException {
    int[] first = new int[keys.size()];
    int[] last = new int[keys.size()];
    Arrays.fill(first, -1);
    Arrays.fill(last, -1);
    try (JsonParser p = samples(timeline)) {
      for (int i = 0; p != null && p.nextToken() == JsonToken.START_OBJECT; i++) {
        while (p.nextToken() == JsonToken.FIELD_NAME) {
          int key = keys.indexOf(p.currentName());
          JsonToken value = p.nextToken();
          if (value.isNumeric() && key >= 0) {
            first[key] = first[key] < 0 ? i : first[key];
            last[key] = i;
          }
          p.skipChildren();
        }
      }
    }
    TreeSet<Integer> wanted = new TreeSet<>();
    for (int k = 0; k < keys.size(); k++) {
      if (first[k] >= 0) {
        wanted.add(first[k]);
        wanted.add(last[k]);
      }
    }
    List<Map<String, Object>> edges = new ArrayList<>(wanted.size());
    try (JsonParser p = samples(timeline)) {
      for (int i = 0;
          p != null && !wanted.isEmpty() && p.nextToken() == JsonToken.START_OBJECT;
          i++) {
        boolean keep = wanted.remove(i);
        Map<String, Object> sample = keep ? new LinkedHashMap<>() : null;
        while (p.nextToken() == JsonToken.FIELD_NAME) {
          String name = p.currentName();
          JsonToken value = p.nextToken();
          if (keep && value.isNumeric()) {
            sample.put(name, p.getNumberValue());
          } else if (keep && value == JsonToken.VALUE_NULL) {
            sample.put(name, null);
          }
          p.skipChildren();
        }
        if (keep) {
          edges.add(sample);
        }
      }
    }
    return edges;
  }

  /**
   * A parser standing on the {@code samples} array's start, or null (closed) when the object has
   * none.
   */
  private static JsonParser samples(byte[] timeline) throws IOException {
    JsonParser p = JSON.createParser(timeline);
    try {
      if (p.nextToken() != JsonToken.START_OBJECT) {
        throw new IOException("timeline.json does not hold one JSON object");
      }
      while (p.nextToken() == JsonToken.FIELD_NAME) {
        String name = p.currentName();
        if (p.nextToken() == JsonToken.START_ARRAY && "samples".equals(name)) {
          return p;
        }
        p.skipChildren();
      }
      p.close();
      return null;
    } catch (IOException | RuntimeException e) {
      p.close();
      throw e;
    }
  }
}
