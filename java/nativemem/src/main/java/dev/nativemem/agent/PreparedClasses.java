package dev.nativemem.agent;

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
 * <p>Only prepared (linked) classes are retransformed: retransforming a class that another thread
 * is linking would wait for that thread, which may itself be waiting here.
 */
final class PreparedClasses {
  private static volatile PreparedClasses current;

  private final Instrumentation instrumentation;
  private final HandleTransformer transformer;
  private final Object registration = new Object();

  /** Retransformations under way; the transformer is registered while there is one. */
  private int running;

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

  /** Called by the core (jni/agent_classes.rs) on the thread that prepared {@code type}. */
  @SuppressWarnings("unused")
  private static void prepared(Class<?> type) {
    PreparedClasses watch = current;
    try {
      if (watch != null && watch.wants(type)) {
        watch.retransform(type);
      }
    } catch (Throwable e) {
      // Nothing reaches the loading thread; retransform reported what it could.
    }
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
