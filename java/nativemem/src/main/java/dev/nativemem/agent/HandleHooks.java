package dev.nativemem.agent;

import dev.nativemem.handles.tracking.End;
import dev.nativemem.handles.tracking.HandleTracker;
import dev.nativemem.handles.tracking.RocksFamily;
import dev.nativemem.handles.tracking.TrackingOptions;
import dev.nativemem.internal.Json;
import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Called by instrumented RocksDB (and ForSt: {@link RocksFamily}) and {@code java.util.zip} code.
 * Every hook is guarded: it never throws into the caller and does nothing when re-entered from
 * nativemem's own code.
 */
public final class HandleHooks {
  private static final HandleTracker TRACKER = HandleTracker.get();
  private static final String ROCKS_OBJECT = "RocksObject";
  private static volatile boolean reported;

  private HandleHooks() {}

  /**
   * The classes a recorded creation or a pool event reaches that nothing else loads before the
   * first one (seen with {@code -Xlog:class+load}). Loaded at that first event, they would be read
   * from the jar through the JDK's {@code ZipFile}, inside that ZipFile's own hooked Inflater
   * calls, and initialised while the thread holds the ZipFile's lock, where a hook on another
   * thread reading the same jar can wait for their initialisation: a deadlock.
   */
  static final List<String> RECORD_PATH =
      Arrays.asList(
          "dev.nativemem.handles.tracking.CreationSites",
          "dev.nativemem.handles.tracking.TrackedHandle",
          "dev.nativemem.handles.tracking.TrackedHandle$OwnerProbe",
          "dev.nativemem.handles.catalogue.LeakCatalogue");

  /** Loads what the hooks need before any JDK class calls them. */
  static void preload() throws ClassNotFoundException {
    for (String name : RECORD_PATH) {
      Class.forName(name, true, HandleHooks.class.getClassLoader());
    }
    TRACKER.enter();
    TRACKER.exit();
    End.values();
    KIND.get(HandleHooks.class);
    GROUP.get(HandleHooks.class);
    new AtomicBoolean().get();
    guarded(() -> {}); // bootstraps the lambda machinery before any instrumented caller
    // The registry hears of a kind, thread or site met first, and of counted streams, through
    // NativeBridge.call: its request and answer are JSON, whose classes load here, not there.
    Json.parse(Json.write(Map.of("name", "", "site", 0, "handle", 0L, "pooled", false)));
    TRACKER.zipCreated(null, 0, -1);
    TRACKER.zipFreed(0, -1);
    pooled(null, false, ZIP_JDK_POOL);
    springPoolSeen(new Object()); // loads the pool books' classes; a plain object has no cache
  }

  private static final String ZIP_JDK_POOL = "java.util.zip.ZipFile";
  private static final String ZIP_SPRING_POOL = HandleTracker.NESTED_JAR_POOL;

  /**
   * A handle's kind is its RocksDB class ({@link RocksFamily#kind}: {@code forst.Options} for
   * ForSt's): a subclass from elsewhere (Kafka Streams' options adapter) is counted, and filtered
   * by {@code include}, as the RocksDB class it extends; the tracker remembers the subclass to show
   * beside the kind.
   */
  private static final ClassValue<String> KIND =
      new ClassValue<String>() {
        @Override
        protected String computeValue(Class<?> type) {
          Class<?> base = familyBase(type);
          RocksFamily family = RocksFamily.ofClass(base.getName());
          String name = base.getName();
          String simple = name.substring(name.lastIndexOf('.') + 1);
          String kind = family == null ? simple : family.kind(simple);
          if (base != type) {
            TRACKER.subclassSeen(kind, type.getName());
          }
          return kind;
        }
      };

  /** The tracking group of a RocksDB-family class: its family's, {@code rocksdb} by default. */
  private static final ClassValue<String> GROUP =
      new ClassValue<String>() {
        @Override
        protected String computeValue(Class<?> type) {
          RocksFamily family = RocksFamily.ofClass(familyBase(type).getName());
          return family == null ? TrackingOptions.ROCKSDB_GROUP : family.group();
        }
      };

  /** {@code type}'s first class (itself or a superclass) in a RocksDB family, else itself. */
  private static Class<?> familyBase(Class<?> type) {
    for (Class<?> c = type; c != null; c = c.getSuperclass()) {
      if (RocksFamily.ofClass(c.getName()) != null) {
        return c;
      }
    }
    return type;
  }

  /**
   * Kinds that own no native memory: their {@code disposeInternal(long)} does nothing (RocksDB's
   * {@code PerfContext}, a view of a thread-local context). Not tracked, so never a leak.
   */
  private static final ClassValue<Boolean> OWNS_NOTHING =
      new ClassValue<Boolean>() {
        @Override
        protected Boolean computeValue(Class<?> type) {
          return DisposeBodies.freesNothing(type);
        }
      };

  /**
   * Classes with a finalizer below {@code Object}: rocksdbjni before 7 closes them when collected.
   */
  private static final ClassValue<Boolean> FINALIZABLE =
      new ClassValue<Boolean>() {
        @Override
        protected Boolean computeValue(Class<?> type) {
          for (Class<?> c = type; c != null && c != Object.class; c = c.getSuperclass()) {
            try {
              c.getDeclaredMethod("finalize");
              return true;
            } catch (NoSuchMethodException | RuntimeException | LinkageError e) {
              // keep looking up the hierarchy
            }
          }
          return false;
        }
      };

  private static final ClassValue<Boolean> IS_ROCKS_OBJECT =
      new ClassValue<Boolean>() {
        @Override
        protected Boolean computeValue(Class<?> type) {
          for (Class<?> c = type; c != null; c = c.getSuperclass()) {
            RocksFamily family = RocksFamily.ofClass(c.getName());
            if (family != null && c.getName().equals(family.className(ROCKS_OBJECT))) {
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

  /** Reports the first failure; never throws itself (a hook's caller is the application's code). */
  private static void failed(Throwable e) {
    try {
      if (!reported) {
        reported = true;
        System.err.println("nativemem agent: a handle hook failed; counts may be incomplete: " + e);
      }
    } catch (Throwable lost) {
      // a stack too full to print: the application's code goes on
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

  /** A RocksDB-family handle, counted in its family's group. */
  private static void create(Object owner, long address, AtomicBoolean flag) {
    Class<?> type = owner.getClass();
    String kind = KIND.get(type);
    if (TRACKER.tracks(kind, GROUP.get(type)) && !OWNS_NOTHING.get(type)) {
      TRACKER.created(owner, kind, address, flag, flag != null && FINALIZABLE.get(type));
    }
  }

  // --- RocksDB: org.rocksdb.RocksObject and AbstractImmutableNativeReference

  /** End of {@code RocksObject(long)}: every RocksObject subclass. */
  public static void rocksCreated(Object owner, long handle, AtomicBoolean owningFlag) {
    guarded(
        () -> {
          if (owningFlag != null && owningFlag.get()) {
            create(owner, handle, owningFlag);
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
            create(owner, 0, owningFlag);
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
          create(owner, handle, null);
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
            create(owner, handle, null);
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
    pooled(inflater, true, ZIP_JDK_POOL);
  }

  /** End of {@code ZipFile.CleanableResource.getInflater}: taken from the cache or new. */
  public static void zipTaken(Object inflater) {
    pooled(inflater, false, ZIP_JDK_POOL);
  }

  /**
   * End of Spring Boot's {@code NestedJarFileResources.endOrCacheInflater} on {@code pool}: cached,
   * unless it was ended there (the cache was full or closed), which the tracker already saw.
   */
  public static void springInflaterReleased(Object pool, Object inflater) {
    springPoolSeen(pool);
    pooled(inflater, true, ZIP_SPRING_POOL);
  }

  /** End of Spring Boot's {@code NestedJarFileResources.getOrCreateInflater} on {@code pool}. */
  public static void springInflaterTaken(Object pool, Object inflater) {
    springPoolSeen(pool);
    pooled(inflater, false, ZIP_SPRING_POOL);
  }

  /** The tracker reads the pool's cache at each report: what rests there is not open. */
  private static void springPoolSeen(Object pool) {
    try {
      TRACKER.nestedJarPoolSeen(pool);
    } catch (Throwable e) {
      failed(e);
    }
  }

  /**
   * Set while a pool hook runs on this thread. nativemem's classes load from its jar through the
   * system class loader, which reads the jar with the JDK's {@code ZipFile}: a class the hook loads
   * the first time takes an Inflater from that pool again, and the inner hook would load the same
   * class again, without end. The inner pool event is skipped (the stream's creation and free are
   * still counted: those hooks need no class that is not loaded by then).
   */
  private static final ThreadLocal<boolean[]> IN_POOL_HOOK =
      ThreadLocal.withInitial(() -> new boolean[1]);

  private static void pooled(Object inflater, boolean pooled, String pool) {
    boolean[] inside = null;
    try {
      boolean[] flag = IN_POOL_HOOK.get();
      if (flag[0]) {
        return;
      }
      flag[0] = true;
      inside = flag;
      TRACKER.zipPooled(inflater, pooled, pool);
    } catch (Throwable e) {
      failed(e);
    } finally {
      if (inside != null) {
        inside[0] = false;
      }
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
