package dev.nativemem.internal;

import dev.nativemem.base.NativeMemoryException;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import java.lang.invoke.VarHandle;
import java.lang.reflect.Constructor;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.lang.reflect.ParameterizedType;
import java.lang.reflect.Type;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Binds the native library's JSON to immutable values and back by one rule: a value's instance
 * fields, in declaration order, are its keys, each field's camelCase name the Rust struct's
 * snake_case one ({@code rssAnonBytes} is {@code rss_anon_bytes}). A key is so spelled once on each
 * side, as the field it is, and a key renamed in Rust fails the contract fixtures' test rather than
 * a reader and a writer of its own. jackson-jr, the jar's JSON library, binds only beans with
 * setters, and jackson-databind, which binds constructors, would add 1.6 MB to the jar for what
 * this one rule needs.
 *
 * <p>Every key must be present. A field is a primitive or its box (a box reads JSON null as null,
 * as does a reference of any other type), a {@code String}, an enum (its constant in lower case), a
 * {@code List} of any of these or of values, a {@code Map} (a JSON object as it is), or another
 * value. A {@code transient} field is not a key: the value derives it. A value has a private
 * constructor without arguments and no setter; a release fence after binding publishes it as final
 * fields would be.
 *
 * <p>Written back, a value is the native JSON it was bound from, byte for byte: its keys in the
 * same order, a null written as null as Rust writes {@code None}.
 *
 * <p>A field marked {@link Added} is a key the Java side adds to what the native library says: it
 * is not read (the native JSON lacks it), and it is written like any other, left out when null. The
 * value's reader sets it after binding, in one step that ends with a release fence as binding does.
 */
public final class JsonBinding {
  /**
   * A key the Java side adds: not read from the native library's JSON, set after binding by the
   * value's reader, written by {@link #toMap} and {@link #write} in its field's place unless null.
   */
  @Retention(RetentionPolicy.RUNTIME)
  @Target(ElementType.FIELD)
  public @interface Added {}

  /** A field and its key, worked out once per class. */
  private static final class Key {
    final Field field;
    final String name;
    final Type type;
    final boolean required;
    final boolean added;

    Key(Field field) {
      field.setAccessible(true);
      this.field = field;
      this.name = key(field);
      this.type = field.getGenericType();
      this.required = field.getType().isPrimitive();
      this.added = field.isAnnotationPresent(Added.class);
    }
  }

  /**
   * A class's keys: every instance field but transient ones, in declaration order ({@link #toMap}
   * writes them all, {@link #read} binds those not {@link Added}); and its constructor without
   * arguments, made accessible, or null when it has none (a value only written).
   */
  private static final class Shape {
    final List<Key> keys = new ArrayList<>();
    final Constructor<?> empty;

    Shape(Class<?> type) {
      for (Field field : type.getDeclaredFields()) {
        int modifiers = field.getModifiers();
        if (!Modifier.isStatic(modifiers) && !Modifier.isTransient(modifiers)) {
          keys.add(new Key(field));
        }
      }
      Constructor<?> constructor;
      try {
        constructor = type.getDeclaredConstructor();
        constructor.setAccessible(true);
      } catch (NoSuchMethodException e) {
        constructor = null;
      }
      this.empty = constructor;
    }
  }

  private static final ClassValue<Shape> SHAPES =
      new ClassValue<>() {
        @Override
        protected Shape computeValue(Class<?> type) {
          return new Shape(type);
        }
      };

  private JsonBinding() {}

  /**
   * The value of {@code type} {@code json} describes.
   *
   * @throws NativeMemoryException if a key of a primitive field is missing or a value has the wrong
   *     type, naming the key and the value's class
   */
  public static <T> T read(Class<T> type, Map<String, Object> json) {
    T value;
    try {
      Shape shape = SHAPES.get(type);
      if (shape.empty == null) {
        throw new NoSuchMethodException(type.getName() + " has no constructor without arguments");
      }
      value = type.cast(shape.empty.newInstance());
      for (Key key : shape.keys) {
        if (key.added) {
          continue;
        }
        Object raw = json.get(key.name);
        if (raw == null && (key.required || !json.containsKey(key.name))) {
          throw malformed(type, key.name, "missing");
        }
        key.field.set(value, convert(key.type, raw, type, key.name));
      }
    } catch (ReflectiveOperationException | ClassCastException | IllegalArgumentException e) {
      throw new NativeMemoryException(
          "cannot read " + type.getSimpleName() + " from the native library's JSON: " + e, e);
    }
    VarHandle.releaseFence();
    return value;
  }

  /** Values of {@code type} read from a JSON array (null reads as empty), unmodifiable. */
  @SuppressWarnings("unchecked")
  public static <T> List<T> readList(Class<T> type, Object array) {
    List<T> values = new ArrayList<>();
    if (array != null) {
      for (Object element : (List<Object>) array) {
        values.add(read(type, (Map<String, Object>) element));
      }
    }
    return Collections.unmodifiableList(values);
  }

  /**
   * {@code value} as the JSON object it was read from: its keys in its fields' order, a null read
   * from the native JSON kept as null; an {@link Added} key the Java side left null is left out, as
   * the native library never writes it.
   */
  public static Map<String, Object> toMap(Object value) {
    Map<String, Object> json = new LinkedHashMap<>();
    try {
      for (Key key : SHAPES.get(value.getClass()).keys) {
        Object field = key.field.get(value);
        if (field != null || !key.added) {
          json.put(key.name, toJsonValue(field));
        }
      }
    } catch (IllegalAccessException e) {
      throw new IllegalStateException(e);
    }
    return json;
  }

  /**
   * {@code value} as JSON text: the native library's JSON it was bound from, key for key in the
   * same order, a null field written as null as Rust writes {@code None}.
   */
  public static String write(Object value) {
    return Json.writeWithNulls(toMap(value));
  }

  /** The JSON key of {@code field}: its name in snake_case. */
  static String key(Field field) {
    String name = field.getName();
    StringBuilder key = new StringBuilder(name.length() + 4);
    for (int i = 0; i < name.length(); i++) {
      char c = name.charAt(i);
      if (Character.isUpperCase(c)) {
        key.append('_').append(Character.toLowerCase(c));
      } else {
        key.append(c);
      }
    }
    return key.toString();
  }

  @SuppressWarnings({"unchecked", "rawtypes"})
  private static Object convert(Type type, Object raw, Class<?> owner, String key) {
    if (raw == null) {
      return null;
    }
    Class<?> plain =
        type instanceof ParameterizedType
            ? (Class<?>) ((ParameterizedType) type).getRawType()
            : (Class<?>) type;
    if (plain == long.class || plain == Long.class) {
      return ((Number) raw).longValue();
    }
    if (plain == int.class || plain == Integer.class) {
      return ((Number) raw).intValue();
    }
    if (plain == double.class || plain == Double.class) {
      return ((Number) raw).doubleValue();
    }
    if (plain == boolean.class || plain == Boolean.class) {
      return (Boolean) raw;
    }
    if (plain == String.class) {
      return (String) raw;
    }
    if (plain.isEnum()) {
      return Enum.valueOf((Class<Enum>) plain, ((String) raw).toUpperCase(Locale.ROOT));
    }
    if (plain == List.class) {
      Type element = ((ParameterizedType) type).getActualTypeArguments()[0];
      List<Object> list = new ArrayList<>();
      for (Object item : (List<Object>) raw) {
        list.add(convert(element, item, owner, key));
      }
      return Collections.unmodifiableList(list);
    }
    if (plain == Map.class) {
      return Collections.unmodifiableMap(new LinkedHashMap<>((Map<String, Object>) raw));
    }
    if (raw instanceof Map) {
      return read(plain, (Map<String, Object>) raw);
    }
    throw malformed(owner, key, "a " + raw.getClass().getSimpleName() + " for " + plain);
  }

  private static Object toJsonValue(Object value) {
    if (value == null
        || value instanceof Number
        || value instanceof Boolean
        || value instanceof String) {
      return value;
    }
    if (value instanceof Enum) {
      return ((Enum<?>) value).name().toLowerCase(Locale.ROOT);
    }
    if (value instanceof List) {
      List<Object> list = new ArrayList<>();
      for (Object item : (List<?>) value) {
        list.add(toJsonValue(item));
      }
      return list;
    }
    if (value instanceof Map) {
      Map<Object, Object> object = new LinkedHashMap<>();
      for (Map.Entry<?, ?> entry : ((Map<?, ?>) value).entrySet()) {
        object.put(entry.getKey(), toJsonValue(entry.getValue()));
      }
      return object;
    }
    return toMap(value);
  }

  private static IllegalArgumentException malformed(Class<?> type, String key, String what) {
    return new IllegalArgumentException("'" + key + "' of " + type.getSimpleName() + " is " + what);
  }
}
