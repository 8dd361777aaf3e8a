package dev.nativemem.internal;

import com.fasterxml.jackson.jr.ob.JSON;
import dev.nativemem.base.NativeMemoryException;
import java.io.IOException;
import java.util.Map;

/** JSON in and out, through jackson-jr (shaded into the jar). */
public final class Json {
  private static final JSON JSON_CODEC = JSON.std;
  private static final JSON JSON_WITH_NULLS = JSON.std.with(JSON.Feature.WRITE_NULL_PROPERTIES);

  private Json() {}

  /** Parses a JSON object produced by the native library. */
  public static Map<String, Object> parseObject(String text) {
    try {
      return JSON_CODEC.mapFrom(text);
    } catch (IOException e) {
      throw new NativeMemoryException("native library returned malformed JSON: " + text, e);
    }
  }

  /**
   * Parses any JSON value produced by the native library: a map, list, string, number, boolean or
   * null.
   */
  public static Object parse(String text) {
    try {
      return JSON_CODEC.anyFrom(text);
    } catch (IOException e) {
      throw new NativeMemoryException("native library returned malformed JSON: " + text, e);
    }
  }

  /** Parses a JSON array produced by the native library. */
  public static java.util.List<Object> parseList(String text) {
    try {
      return JSON_CODEC.listFrom(text);
    } catch (IOException e) {
      throw new NativeMemoryException("native library returned malformed JSON: " + text, e);
    }
  }

  /**
   * Parses a JSON object from a file we did not write (an incident bundle); the exception's message
   * names the problem, not the text.
   */
  public static Map<String, Object> parseUntrusted(byte[] bytes) throws IOException {
    Object value = JSON_CODEC.anyFrom(bytes);
    if (!(value instanceof Map)) {
      throw new IOException("the file does not hold one JSON object");
    }
    @SuppressWarnings("unchecked")
    Map<String, Object> map = (Map<String, Object>) value;
    return map;
  }

  /** Writes maps, lists, strings, numbers and booleans as compact JSON. */
  public static String write(Object value) {
    try {
      return JSON_CODEC.asString(value);
    } catch (IOException e) {
      throw new NativeMemoryException("cannot write JSON for " + value.getClass().getName(), e);
    }
  }

  /** Like {@link #write}, with null values of maps written as {@code null}, not left out. */
  public static String writeWithNulls(Object value) {
    try {
      return JSON_WITH_NULLS.asString(value);
    } catch (IOException e) {
      throw new NativeMemoryException("cannot write JSON for " + value.getClass().getName(), e);
    }
  }

  /** A required string field. */
  public static String string(Map<String, Object> json, String key) {
    Object value = json.get(key);
    if (!(value instanceof String)) {
      throw new NativeMemoryException("native JSON lacks string '" + key + "': " + json);
    }
    return (String) value;
  }

  /** A required integral field. */
  public static long number(Map<String, Object> json, String key) {
    Object value = json.get(key);
    if (!(value instanceof Number)) {
      throw new NativeMemoryException("native JSON lacks number '" + key + "': " + json);
    }
    return ((Number) value).longValue();
  }

  // Fields the allocator and breakdown snapshots read.

  /** An integral field that may be absent or null. */
  public static Long optionalNumber(Map<String, Object> json, String key) {
    Object value = json.get(key);
    return value instanceof Number ? ((Number) value).longValue() : null;
  }

  /** A required floating-point field. */
  public static double decimal(Map<String, Object> json, String key) {
    Object value = json.get(key);
    if (!(value instanceof Number)) {
      throw new NativeMemoryException("native JSON lacks number '" + key + "': " + json);
    }
    return ((Number) value).doubleValue();
  }

  /** A required boolean field. */
  public static boolean bool(Map<String, Object> json, String key) {
    Object value = json.get(key);
    if (!(value instanceof Boolean)) {
      throw new NativeMemoryException("native JSON lacks boolean '" + key + "': " + json);
    }
    return (Boolean) value;
  }

  /** A required nested object. */
  public static Map<String, Object> object(Map<String, Object> json, String key) {
    Map<String, Object> value = optionalObject(json, key);
    if (value == null) {
      throw new NativeMemoryException("native JSON lacks object '" + key + "': " + json);
    }
    return value;
  }

  /** A nested object that may be absent or null. */
  @SuppressWarnings("unchecked")
  public static Map<String, Object> optionalObject(Map<String, Object> json, String key) {
    Object value = json.get(key);
    return value instanceof Map ? (Map<String, Object>) value : null;
  }

  /** A list of objects; absent or null reads as empty. */
  @SuppressWarnings("unchecked")
  public static java.util.List<Map<String, Object>> objects(Map<String, Object> json, String key) {
    Object value = json.get(key);
    return value instanceof java.util.List
        ? (java.util.List<Map<String, Object>>) value
        : java.util.List.of();
  }

  /** A list of strings; absent or null reads as empty. */
  public static java.util.List<String> strings(Object value) {
    java.util.List<String> strings = new java.util.ArrayList<>();
    if (value instanceof java.util.List) {
      for (Object o : (java.util.List<?>) value) {
        strings.add((String) o);
      }
    }
    return java.util.Collections.unmodifiableList(strings);
  }
}
