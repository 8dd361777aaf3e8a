package dev.nativemem.agent;

import dev.nativemem.handles.tracking.RocksFamily;
import dev.nativemem.internal.NativeBridge;
import java.lang.instrument.Instrumentation;
import java.lang.instrument.UnmodifiableClassException;
import java.util.ArrayList;
import java.util.List;

/**
 * Instruments the classes {@link HandleTransformer} changes, and no other: no transformer stays
 * registered, so the JVM hands no class file to the agent as classes load (which would cost every
 * class of a CDS archive a read of its bytes). The classes already prepared are retransformed at
 * start; every later one is retransformed when the core's JVMTI ClassPrepare callback names it, on
 * the preparing thread, before any code of the class runs: no instance of it exists yet, so no
 * creation goes uncounted. The transformer is registered only while a retransformation runs.
 *
 * <p>Each retransformation is a pause of the whole JVM that grows with the classes loaded (about 17
 * ms in a Flink job's JVM), so a RocksDB family's classes are instrumented together: when the first
 * of them is prepared, the others are loaded (not initialised) through the same class loader and
 * all are retransformed in one call; the JVM links them for it, on this thread. A class another
 * thread is linking at that moment is waited for, and that thread's own call here, for the same
 * batch, skips the class already done.
 */
final class PreparedClasses {
  private static volatile PreparedClasses current;

  private final Instrumentation instrumentation;
  private final HandleTransformer transformer;
  private final Object registration = new Object();

  /** Retransformations under way; the transformer is registered while there is one. */
  private int running;

  /** The classes instrumented, so that the ClassPrepare of one already done is passed over. */
  private final ClassValue<boolean[]> done =
      new ClassValue<boolean[]>() {
        @Override
        protected boolean[] computeValue(Class<?> type) {
          return new boolean[1];
        }
      };

  /**
   * Set on a thread while it loads and instruments a batch: its own ClassPrepares are its batch.
   */
  private static final ThreadLocal<Boolean> IN_BATCH = new ThreadLocal<>();

  private PreparedClasses(Instrumentation instrumentation, HandleTransformer transformer) {
    this.instrumentation = instrumentation;
    this.transformer = transformer;
  }

  /**
   * Starts the watch and instruments the classes already prepared; false if the core offers no
   * watch (the caller then keeps the transformer registered instead).
   */
  static boolean start(Instrumentation instrumentation, HandleTransformer transformer) {
    PreparedClasses watch = new PreparedClasses(instrumentation, transformer);
    current = watch;
    Class<?>[] prepared;
    try {
      prepared =
          NativeBridge.agentWatchPrepared(PreparedClasses.class, transformer.signaturePrefixes());
    } catch (RuntimeException | LinkageError e) {
      current = null;
      return false;
    }
    List<Class<?>> wanted = new ArrayList<>();
    for (Class<?> type : prepared) {
      if (watch.wants(type)) {
        wanted.add(type);
      }
    }
    if (!wanted.isEmpty()) {
      watch.retransform(wanted.toArray(new Class<?>[0]));
    }
    return true;
  }

  /** Called by the core (jvm/class_prepare.rs) on the thread that prepared {@code type}. */
  @SuppressWarnings("unused")
  private static void prepared(Class<?> type) {
    PreparedClasses watch = current;
    if (watch == null || IN_BATCH.get() != null) {
      return;
    }
    IN_BATCH.set(Boolean.TRUE);
    try {
      if (watch.wants(type) && !watch.isDone(type)) {
        watch.retransform(watch.batchOf(type));
      }
    } catch (Throwable e) {
      // Nothing reaches the loading thread; retransform reported what it could.
    } finally {
      IN_BATCH.remove();
    }
  }

  /**
   * {@code type} and, for a RocksDB family's class, the family's other instrumented classes that
   * its class loader has and that are not yet done, loaded without running their initialisers.
   */
  private Class<?>[] batchOf(Class<?> type) {
    List<Class<?>> batch = new ArrayList<>();
    batch.add(type);
    RocksFamily family = RocksFamily.ofClass(type.getName());
    if (family != null) {
      for (String name : transformer.classNames(family)) {
        if (name.equals(type.getName())) {
          continue;
        }
        try {
          Class<?> other = Class.forName(name, false, type.getClassLoader());
          if (wants(other) && !isDone(other)) {
            batch.add(other);
          }
        } catch (ClassNotFoundException | LinkageError | RuntimeException e) {
          // Not in this RocksDB version (HyperClockCache came with 8.x), or not loadable here (a
          // class loader being closed refuses with an IllegalStateException): the class prepared
          // is instrumented all the same, the others when they are prepared.
        }
      }
    }
    return batch.toArray(new Class<?>[0]);
  }

  private boolean isDone(Class<?> type) {
    return done.get(type)[0];
  }

  private boolean wants(Class<?> type) {
    return transformer.instruments(type.getName().replace('.', '/'))
        && instrumentation.isModifiableClass(type);
  }

  private void retransform(Class<?>... classes) {
    synchronized (registration) {
      if (running++ == 0) {
        instrumentation.addTransformer(transformer, true);
      }
    }
    try {
      instrumentation.retransformClasses(classes);
      for (Class<?> type : classes) {
        done.get(type)[0] = true;
      }
    } catch (UnmodifiableClassException | RuntimeException | LinkageError e) {
      System.err.println("nativemem agent: cannot instrument " + names(classes) + ": " + e);
    } finally {
      synchronized (registration) {
        if (--running == 0) {
          instrumentation.removeTransformer(transformer);
        }
      }
    }
  }

  private static String names(Class<?>[] classes) {
    StringBuilder out = new StringBuilder();
    for (Class<?> type : classes) {
      out.append(out.length() == 0 ? "" : ", ").append(type.getName());
    }
    return out.toString();
  }
}
