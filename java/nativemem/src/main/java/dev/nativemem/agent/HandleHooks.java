package dev.nativemem.agent;

import dev.nativemem.internal.handles.End;
import dev.nativemem.internal.handles.HandleTracker;
import dev.nativemem.internal.handles.TrackingOptions;
import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Called by instrumented RocksDB and {@code java.util.zip} code. Every hook is guarded: it never
 * throws into the caller and does nothing when re-entered from nativemem's own code.
 */
public final class HandleHooks {
  private static final HandleTracker TRACKER = HandleTracker.get();
  private static final String ROCKS_OBJECT = "org.rocksdb.RocksObject";
  private static volatile boolean reported;

  private HandleHooks() {}

  /** Loads what the hooks need before any JDK class calls them. */
  static void preload() {
    TRACKER.enter();
    TRACKER.exit();
    End.values();
    KIND.get(HandleHooks.class);
    new AtomicBoolean().get();
    guarded(() -> {}); // bootstraps the lambda machinery before any instrumented caller
    TRACKER.zipCreated(null, 0, -1);
    TRACKER.zipFreed(0, -1);
  }

  private static final ClassValue<String> KIND =
      new ClassValue<String>() {
        @Override
        protected String computeValue(Class<?> type) {
          String name = type.getName();
          return name.substring(name.lastIndexOf('.') + 1);
        }
      };

  private static final ClassValue<Boolean> IS_ROCKS_OBJECT =
      new ClassValue<Boolean>() {
        @Override
        protected Boolean computeValue(Class<?> type) {
          for (Class<?> c = type; c != null; c = c.getSuperclass()) {
            if (c.getName().equals(ROCKS_OBJECT)) {
              return true;
            }
          }
          return false;
        }
      };

  /** RocksDB's {@code owningHandle_}, read reflectively where the bytecode could not pass it. */
  private static final ClassValue<Field> OWNING_FLAG =
      new ClassValue<Field>() {
        @Override
        protected Field computeValue(Class<?> type) {
          for (Class<?> c = type; c != null; c = c.getSuperclass()) {
            try {
              Field field = c.getDeclaredField("owningHandle_");
              if (field.getType() == AtomicBoolean.class) {
                field.setAccessible(true);
                return field;
              }
            } catch (NoSuchFieldException | RuntimeException e) {
              // keep looking up the hierarchy
            }
          }
          return null;
        }
      };

  private static final ClassValue<Field> BLOCK_CACHE = declaredField("blockCache");

  /** {@code ColumnFamilyHandle.rocksDB_}: the database a family handle belongs to. */
  private static final ClassValue<Field> DATABASE = declaredField("rocksDB_");

  private static final ClassValue<Method> GET_OPTIONS = publicMethod("getOptions");

  private static final ClassValue<Method> GET_NAME = publicMethod("getName");

  private static final byte[] DEFAULT_FAMILY = "default".getBytes(StandardCharsets.UTF_8);

  private static ClassValue<Field> declaredField(String name) {
    return new ClassValue<Field>() {
      @Override
      protected Field computeValue(Class<?> type) {
        try {
          Field field = type.getDeclaredField(name);
          field.setAccessible(true);
          return field;
        } catch (NoSuchFieldException | RuntimeException e) {
          return null;
        }
      }
    };
  }

  private static ClassValue<Method> publicMethod(String name) {
    return new ClassValue<Method>() {
      @Override
      protected Method computeValue(Class<?> type) {
        try {
          return type.getMethod(name);
        } catch (NoSuchMethodException | RuntimeException e) {
          return null;
        }
      }
    };
  }

  /** A hook's body; whatever it throws, the guard reports. */
  private interface Body {
    void run() throws Throwable;
  }

  /**
   * Runs a hook's body unless re-entered from nativemem's own code; never throws into the
   * instrumented caller.
   */
  private static void guarded(Body body) {
    if (!TRACKER.enter()) {
      return;
    }
    try {
      body.run();
    } catch (Throwable e) {
      failed(e);
    } finally {
      TRACKER.exit();
    }
  }

  private static void failed(Throwable e) {
    if (!reported) {
      reported = true;
      System.err.println("nativemem agent: a handle hook failed; counts may be incomplete: " + e);
    }
  }

  private static AtomicBoolean flagOf(Object rocksObject) throws IllegalAccessException {
    Field field = OWNING_FLAG.get(rocksObject.getClass());
    return field == null ? null : (AtomicBoolean) field.get(rocksObject);
  }

  private static long idOf(Object rocksObject) throws IllegalAccessException {
    if (rocksObject == null) {
      return -1;
    }
    AtomicBoolean flag = flagOf(rocksObject);
    return TRACKER.idOf(rocksObject, flag);
  }

  private static void create(Object owner, long address, AtomicBoolean flag, String group) {
    String kind = KIND.get(owner.getClass());
    if (TRACKER.tracks(kind, group)) {
      TRACKER.created(owner, kind, address, flag);
    }
  }

  // --- RocksDB: org.rocksdb.RocksObject and AbstractImmutableNativeReference

  /** End of {@code RocksObject(long)}: every RocksObject subclass. */
  public static void rocksCreated(Object owner, long handle, AtomicBoolean owningFlag) {
    guarded(
        () -> {
          if (owningFlag != null && owningFlag.get()) {
            create(owner, handle, owningFlag, TrackingOptions.ROCKSDB_GROUP);
          }
        });
  }

  /**
   * End of {@code AbstractImmutableNativeReference(boolean)}: the subclasses that are not
   * RocksObjects.
   */
  public static void immutableCreated(Object owner, AtomicBoolean owningFlag) {
    guarded(
        () -> {
          if (owningFlag != null && owningFlag.get() && !IS_ROCKS_OBJECT.get(owner.getClass())) {
            create(owner, 0, owningFlag, TrackingOptions.ROCKSDB_GROUP);
          }
        });
  }

  /** Start of {@code AbstractImmutableNativeReference.close()}. */
  public static void closing(Object owner, AtomicBoolean owningFlag) {
    ending(owner, owningFlag, End.CLOSED);
  }

  /** Start of {@code disOwnNativeHandle()}. */
  public static void transferring(Object owner, AtomicBoolean owningFlag) {
    ending(owner, owningFlag, End.TRANSFERRED);
  }

  private static void ending(Object owner, AtomicBoolean owningFlag, End how) {
    guarded(
        () -> {
          if (owningFlag != null && owningFlag.get()) {
            TRACKER.ended(owner, owningFlag, how);
          }
        });
  }

  // --- RocksDB: RocksMutableObject (slices)

  public static void mutableCreated(Object owner, long handle) {
    guarded(
        () -> {
          create(owner, handle, null, TrackingOptions.ROCKSDB_GROUP);
        });
  }

  /**
   * Start of {@code setNativeHandle(long, boolean)}: the old handle is given up, a new one taken.
   */
  public static void mutableHandleSet(Object owner, long handle, boolean owning) {
    guarded(
        () -> {
          TRACKER.ended(owner, null, End.TRANSFERRED);
          if (owning) {
            create(owner, handle, null, TrackingOptions.ROCKSDB_GROUP);
          }
        });
  }

  public static void mutableClosing(Object owner, boolean owning) {
    guarded(
        () -> {
          if (owning) {
            TRACKER.ended(owner, null, End.CLOSED);
          }
        });
  }

  // --- RocksDB: caches and what keeps them alive natively

  /** End of an {@code LRUCache}/{@code ClockCache}/{@code HyperClockCache} constructor. */
  public static void cacheCapacity(Object cache, long capacityBytes) {
    guarded(
        () -> {
          TRACKER.setCapacity(cache, flagOf(cache), capacityBytes);
        });
  }

  /** Start of {@code setTableFormatConfig}: the options' table factory will share the cache. */
  public static void tableConfigSet(Object options, Object tableConfig) {
    guarded(
        () -> {
          Object cache = valueOf(BLOCK_CACHE, tableConfig);
          if (cache != null) {
            TRACKER.retain(idOf(options), idOf(cache));
          }
        });
  }

  /** End of an options constructor taking another options object: a native copy. */
  public static void optionsDerived(Object target, Object source) {
    guarded(
        () -> {
          if (source != null && IS_ROCKS_OBJECT.get(source.getClass())) {
            TRACKER.inherit(idOf(target), idOf(source));
          }
        });
  }

  /**
   * End of {@code ColumnFamilyHandle.getDescriptor()}: its options copy the family's. The default
   * family's handle from {@code getDefaultColumnFamily()} owns nothing and is not tracked: the
   * family is then followed through its database.
   */
  public static void descriptorFetched(Object columnFamily, Object descriptor) {
    guarded(
        () -> {
          long source = idOf(columnFamily);
          if (source < 0 && isDefaultFamily(descriptor)) {
            source = idOf(valueOf(DATABASE, columnFamily));
          }
          TRACKER.inherit(idOf(optionsOf(descriptor)), source);
        });
  }

  /**
   * End of a static {@code open} of {@code RocksDB} or a subclass taking one {@code Options}: the
   * default family uses that object's table configuration.
   */
  public static void databaseOpened(Object db, Object options) {
    guarded(
        () -> {
          TRACKER.inherit(idOf(db), idOf(options));
        });
  }

  /**
   * End of a static {@code open(..., descriptors, handles, ...)} of {@code RocksDB} or a subclass:
   * each handle takes its descriptor's options, and the database its default family's.
   */
  public static void columnFamiliesOpened(Object db, List<?> descriptors, List<?> handles) {
    guarded(
        () -> {
          if (descriptors != null && handles != null) {
            for (int i = 0; i < descriptors.size(); i++) {
              long options = idOf(optionsOf(descriptors.get(i)));
              if (i < handles.size()) {
                TRACKER.inherit(idOf(handles.get(i)), options);
              }
              if (isDefaultFamily(descriptors.get(i))) {
                TRACKER.inherit(idOf(db), options);
              }
            }
          }
        });
  }

  /** End of {@code RocksDB.createColumnFamily(descriptor)}. */
  public static void columnFamilyCreated(Object descriptor, Object handle) {
    guarded(
        () -> {
          TRACKER.inherit(idOf(handle), idOf(optionsOf(descriptor)));
        });
  }

  /**
   * End of {@code createColumnFamilies}: {@code source} is either the descriptor list (each handle
   * copies its descriptor's options) or one options object that every new family copies.
   */
  public static void columnFamiliesCreated(Object source, List<?> handles) {
    guarded(
        () -> {
          if (handles != null && source instanceof List) {
            List<?> descriptors = (List<?>) source;
            for (int i = 0; i < Math.min(descriptors.size(), handles.size()); i++) {
              TRACKER.inherit(idOf(handles.get(i)), idOf(optionsOf(descriptors.get(i))));
            }
          } else if (handles != null && source != null && IS_ROCKS_OBJECT.get(source.getClass())) {
            long options = idOf(source);
            for (Object handle : handles) {
              TRACKER.inherit(idOf(handle), options);
            }
          }
        });
  }

  private static Object optionsOf(Object descriptor) throws ReflectiveOperationException {
    return callOn(GET_OPTIONS, descriptor);
  }

  private static boolean isDefaultFamily(Object descriptor) throws ReflectiveOperationException {
    Object name = callOn(GET_NAME, descriptor);
    return name instanceof byte[] && Arrays.equals((byte[]) name, DEFAULT_FAMILY);
  }

  private static Object callOn(ClassValue<Method> getter, Object target)
      throws ReflectiveOperationException {
    if (target == null) {
      return null;
    }
    Method method = getter.get(target.getClass());
    return method == null ? null : method.invoke(target);
  }

  private static Object valueOf(ClassValue<Field> field, Object target)
      throws IllegalAccessException {
    Field found = target == null ? null : field.get(target.getClass());
    return found == null ? null : found.get(target);
  }

  // --- java.util.zip.Inflater and Deflater

  // The tracker guards its own slow path against re-entry; the common path only counts.

  /**
   * In the constructor, once the zlib stream exists. {@code kind}: 0 {@code Inflater}, 1 {@code
   * Deflater}.
   */
  public static void zipCreated(Object owner, long address, int kind) {
    try {
      TRACKER.zipCreated(owner, address, kind);
    } catch (Throwable e) {
      failed(e);
    }
  }

  /** Start of {@code ZipFile.CleanableResource.releaseInflater}: back into the zip file's cache. */
  public static void zipReleased(Object inflater) {
    try {
      TRACKER.zipPooled(inflater, true);
    } catch (Throwable e) {
      failed(e);
    }
  }

  /** End of {@code ZipFile.CleanableResource.getInflater}: taken from the cache or new. */
  public static void zipTaken(Object inflater) {
    try {
      TRACKER.zipPooled(inflater, false);
    } catch (Throwable e) {
      failed(e);
    }
  }

  /** Start of {@code InflaterZStreamRef.run()}/{@code DeflaterZStreamRef.run()}. */
  public static void zipFreed(long address, int kind) {
    try {
      TRACKER.zipFreed(address, kind);
    } catch (Throwable e) {
      failed(e);
    }
  }
}
