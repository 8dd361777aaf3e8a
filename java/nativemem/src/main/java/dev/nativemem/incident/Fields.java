package dev.nativemem.incident;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;

/**
 * Values read from a bundle's JSON, which may come from another machine or another hand: a value of
 * the wrong type reads as absent, never as an exception.
 */
final class Fields {
  private Fields() {}

  /** A string, or null when absent or not a string. */
  static String string(Map<String, Object> json, String key) {
    Object value = json == null ? null : json.get(key);
    return value instanceof String ? (String) value : null;
  }

  /** A number, or null when absent, null or not a finite number. */
  static Double number(Map<String, Object> json, String key) {
    Object value = json == null ? null : json.get(key);
    if (!(value instanceof Number)) {
      return null;
    }
    double d = ((Number) value).doubleValue();
    return Double.isFinite(d) ? d : null;
  }

  /** A whole number (rounded toward zero), or null. */
  static Long whole(Map<String, Object> json, String key) {
    Double d = number(json, key);
    return d == null ? null : (long) d.doubleValue();
  }

  /** A whole number, or 0. */
  static long count(Map<String, Object> json, String key) {
    Long value = whole(json, key);
    return value == null ? 0 : value;
  }

  /** A nested object, or null. */
  @SuppressWarnings("unchecked")
  static Map<String, Object> object(Map<String, Object> json, String key) {
    Object value = json == null ? null : json.get(key);
    return value instanceof Map ? (Map<String, Object>) value : null;
  }

  /** The objects of a list, skipping elements that are not objects; absent reads as empty. */
  @SuppressWarnings("unchecked")
  static List<Map<String, Object>> objects(Map<String, Object> json, String key) {
    Object value = json == null ? null : json.get(key);
    if (!(value instanceof List)) {
      return Collections.emptyList();
    }
    List<Map<String, Object>> out = new ArrayList<>();
    for (Object element : (List<Object>) value) {
      if (element instanceof Map) {
        out.add((Map<String, Object>) element);
      }
    }
    return out;
  }

  /** The strings of a list, skipping other elements; absent reads as empty. */
  static List<String> strings(Map<String, Object> json, String key) {
    Object value = json == null ? null : json.get(key);
    List<String> out = new ArrayList<>();
    if (value instanceof List) {
      for (Object element : (List<?>) value) {
        if (element instanceof String) {
          out.add((String) element);
        }
      }
    }
    return out;
  }
}
