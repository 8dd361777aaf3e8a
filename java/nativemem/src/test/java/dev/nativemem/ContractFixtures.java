package dev.nativemem;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.nativemem.internal.Json;
import java.io.IOException;
import java.io.InputStream;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Function;

/**
 * The JSON contract with the native library: each golden fixture, written by the Rust test {@code
 * rust/nativemem/tests/contract_fixtures.rs} from the types the JNI exports serialize, is read by
 * its Java class through every public accessor. A key Java reads that the fixture lacks fails (the
 * strict readers throw, the optional ones are caught by recording); so does a key the fixture has
 * that Java never reads, unless listed below as passed through on purpose.
 */
public final class ContractFixtures {
  private ContractFixtures() {}

  /**
   * As {@link #check(String, Function, String...)}, for a value bound from the fixture whole: its
   * {@code toJson()} must then give the native library's JSON back byte for byte, every key in the
   * native order and a null written as null, so that a bundle or a {@code --json} answer is the
   * Rust struct's JSON, not a Java dialect of it.
   */
  public static void checkWrittenBack(
      String fixture, Function<Map<String, Object>, Object> reader) {
    check(fixture, reader);
    Object value = reader.apply(Json.parseObject(text(fixture)));
    try {
      assertEquals(
          Json.writeWithNulls(Json.parseObject(text(fixture))),
          value.getClass().getMethod("toJson").invoke(value),
          fixture + ": toJson() is not the native library's JSON");
    } catch (ReflectiveOperationException e) {
      throw new AssertionError(fixture + ": " + value.getClass() + " has no toJson()", e);
    }
  }

  /**
   * Reads {@code fixture} into {@code reader}'s object, calls every public accessor on it and on
   * the objects they return, and compares the keys read with the keys present.
   */
  public static void check(
      String fixture, Function<Map<String, Object>, Object> reader, String... passedThrough) {
    check(fixture, reader, Set.of(), passedThrough);
  }

  /**
   * As above; {@code javaOnly} are keys Java reads that the native library never writes (they come
   * from Java's own JSON read back).
   */
  public static void check(
      String fixture,
      Function<Map<String, Object>, Object> reader,
      Set<String> javaOnly,
      String[] passedThrough) {
    Map<String, Object> parsed = Json.parseObject(text(fixture));
    Set<String> present = new TreeSet<>();
    collectKeys("", parsed, present);
    Set<String> read = new TreeSet<>();
    Set<String> added = new TreeSet<>();
    Object value = reader.apply(new RecordingMap("", parsed, read, added));
    exercise(value, Collections.newSetFromMap(new IdentityHashMap<>()));

    Set<String> missing = new TreeSet<>(read);
    missing.removeAll(present);
    missing.removeAll(added);
    missing.removeAll(javaOnly);
    assertEquals(
        Set.of(),
        missing,
        fixture + ": Java reads keys the native library does not write (renamed on one side?)");
    Set<String> unread = new TreeSet<>(present);
    unread.removeAll(read);
    unread.removeAll(List.of(passedThrough));
    assertEquals(
        Set.of(),
        unread,
        fixture + ": the native library writes keys no Java accessor reads (renamed on one side?)");
    assertTrue(present.size() > 0, fixture + " is empty");
  }

  /** The text of {@code fixture}, one of the files the Rust test writes. */
  public static String text(String fixture) {
    try (InputStream in =
        ContractFixtures.class.getResourceAsStream("/dev/nativemem/contract/" + fixture)) {
      if (in == null) {
        throw new AssertionError(
            fixture
                + " is missing: write the fixtures with NATIVEMEM_WRITE_FIXTURES=1 cargo test"
                + " -p nativemem --test contract_fixtures");
      }
      return new String(in.readAllBytes(), StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new AssertionError(e);
    }
  }

  /** Key paths: {@code a.b} for nested objects, {@code a[].b} inside lists. */
  private static void collectKeys(String prefix, Object value, Set<String> keys) {
    if (value instanceof Map) {
      for (Map.Entry<?, ?> e : ((Map<?, ?>) value).entrySet()) {
        String path = prefix + e.getKey();
        keys.add(path);
        collectKeys(path + ".", e.getValue(), keys);
      }
    } else if (value instanceof List) {
      for (Object element : (List<?>) value) {
        collectKeys(prefix.substring(0, Math.max(0, prefix.length() - 1)) + "[].", element, keys);
      }
    }
  }

  /** Calls every public no-argument accessor of nativemem's types, depth first. */
  private static void exercise(Object value, Set<Object> seen) {
    if (value == null || !seen.add(value)) {
      return;
    }
    if (value instanceof Optional) {
      ((Optional<?>) value).ifPresent(v -> exercise(v, seen));
      return;
    }
    if (value instanceof Collection) {
      ((Collection<?>) value).forEach(v -> exercise(v, seen));
      return;
    }
    if (value instanceof Map) {
      ((Map<?, ?>) value).values().forEach(v -> exercise(v, seen));
      return;
    }
    if (!value.getClass().getName().startsWith("dev.nativemem.")) {
      return;
    }
    for (Method method : value.getClass().getMethods()) {
      if (method.getParameterCount() != 0
          || Modifier.isStatic(method.getModifiers())
          || method.getDeclaringClass() == Object.class
          || method.getDeclaringClass().isEnum()
          // analyze() and request() read the dump file itself, not the fixture
          || method.getName().equals("analyze")
          || method.getName().equals("request")) {
        continue;
      }
      try {
        exercise(method.invoke(value), seen);
      } catch (IllegalAccessException e) {
        throw new AssertionError(e);
      } catch (InvocationTargetException e) {
        throw new AssertionError(
            value.getClass().getSimpleName() + "." + method.getName() + "() failed on the fixture",
            e.getCause());
      }
    }
    value.toString();
  }

  /**
   * A JSON object that notes each key read from it (and each key Java adds to it), and wraps what
   * it holds likewise.
   */
  private static final class RecordingMap extends LinkedHashMap<String, Object> {
    private final String prefix;
    private final Set<String> read;
    private final Set<String> added;

    RecordingMap(String prefix, Map<String, Object> json, Set<String> read, Set<String> added) {
      this.prefix = prefix;
      this.read = read;
      this.added = added;
      json.forEach((key, value) -> super.put(key, wrap(prefix + key, value, read, added)));
    }

    @SuppressWarnings("unchecked")
    private static Object wrap(String path, Object value, Set<String> read, Set<String> added) {
      if (value instanceof Map) {
        return new RecordingMap(path + ".", (Map<String, Object>) value, read, added);
      }
      if (value instanceof List) {
        List<Object> list = new ArrayList<>();
        for (Object element : (List<?>) value) {
          list.add(wrap(path + "[]", element, read, added));
        }
        return list;
      }
      return value;
    }

    @Override
    public Object put(String key, Object value) {
      added.add(prefix + key);
      return super.put(key, value);
    }

    @Override
    public Object get(Object key) {
      read.add(prefix + key);
      return super.get(key);
    }

    @Override
    public Object getOrDefault(Object key, Object defaultValue) {
      read.add(prefix + key);
      return super.getOrDefault(key, defaultValue);
    }
  }
}
