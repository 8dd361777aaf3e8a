package dev.nativemem.boot;

import java.lang.invoke.MethodHandle;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The one class of nativemem in the bootstrap class loader: the instrumented {@code java.util.zip}
 * classes (loaded by the bootstrap loader, which sees no other nativemem class) call these methods,
 * which forward to the agent's hooks ({@code dev.nativemem.agent.HandleHooks}, in the system class
 * loader). The agent defines this class from its bytes through JNI and installs the hooks once,
 * before it instruments any JDK class; its class file is not in the jar under a class's name (the
 * build renames it), so no class loader finds a copy of its own.
 *
 * <p>Nothing a hook throws reaches the JDK's code: these methods run inside {@code Inflater}'s
 * constructor, its cleaner and {@code ZipFile}'s Inflater cache, under every class loader's read of
 * a jar, where an exception would become the loader's {@code ClassNotFoundException} (the JDK's
 * {@code URLClassPath} takes any exception while opening an entry for "not there"). A failed call
 * is counted ({@link #failures()}) and the JDK's code goes on.
 */
public final class ZipHooks {
  private static volatile MethodHandle created;
  private static volatile MethodHandle freed;
  private static volatile MethodHandle released;
  private static volatile MethodHandle taken;

  /** Hook calls that threw (a stack overflow included) and were kept from the JDK's code. */
  private static final AtomicLong FAILURES = new AtomicLong();

  private ZipHooks() {}

  /**
   * Installs the hooks; only the first call counts (the agent makes it before instrumenting), so
   * nothing can replace them later. Returns whether this call installed them.
   */
  public static synchronized boolean install(
      MethodHandle created, MethodHandle freed, MethodHandle released, MethodHandle taken) {
    if (ZipHooks.created != null) {
      return false;
    }
    ZipHooks.freed = freed;
    ZipHooks.released = released;
    ZipHooks.taken = taken;
    ZipHooks.created = created;
    return true;
  }

  /** How many hook calls threw since the JVM started; each was kept from the JDK's code. */
  public static long failures() {
    return FAILURES.get();
  }

  /** An Inflater (kind 0) or Deflater (1) owning the zlib stream at {@code address}. */
  public static void zipCreated(Object owner, long address, int kind) {
    MethodHandle hook = created;
    if (hook != null) {
      try {
        hook.invokeExact(owner, address, kind);
      } catch (Throwable e) {
        try {
          FAILURES.incrementAndGet();
        } catch (Throwable lost) {
          // a stack too full even to count: uncounted, and still kept from the JDK's code
        }
      }
    }
  }

  /** The stream at {@code address} is freed. */
  public static void zipFreed(long address, int kind) {
    MethodHandle hook = freed;
    if (hook != null) {
      try {
        hook.invokeExact(address, kind);
      } catch (Throwable e) {
        try {
          FAILURES.incrementAndGet();
        } catch (Throwable lost) {
          // a stack too full even to count: uncounted, and still kept from the JDK's code
        }
      }
    }
  }

  /** An Inflater goes back into {@code ZipFile}'s pool. */
  public static void zipReleased(Object inflater) {
    MethodHandle hook = released;
    if (hook != null) {
      try {
        hook.invokeExact(inflater);
      } catch (Throwable e) {
        try {
          FAILURES.incrementAndGet();
        } catch (Throwable lost) {
          // a stack too full even to count: uncounted, and still kept from the JDK's code
        }
      }
    }
  }

  /** An Inflater is taken out of {@code ZipFile}'s pool. */
  public static void zipTaken(Object inflater) {
    MethodHandle hook = taken;
    if (hook != null) {
      try {
        hook.invokeExact(inflater);
      } catch (Throwable e) {
        try {
          FAILURES.incrementAndGet();
        } catch (Throwable lost) {
          // a stack too full even to count: uncounted, and still kept from the JDK's code
        }
      }
    }
  }
}
