package dev.nativemem.handles.tracking;

import java.util.Arrays;

/**
 * Whether the current thread runs only because the garbage collector found an owner unreachable: a
 * {@code java.lang.ref.Cleaner}'s thread (the JDK's common cleaner, Spring Boot's own, any other
 * made by {@code Cleaner.create}) or a finalizer thread. Decided by the thread's run loop ({@code
 * CleanerImpl.run}, {@code Finalizer}), not its name, once per thread: the JDK makes these threads
 * {@code InnocuousThread}s or the {@code FinalizerThread}, so other threads are told apart by one
 * class comparison.
 */
final class Reclaimers {
  private static final Class<?> INNOCUOUS = classOrNull("jdk.internal.misc.InnocuousThread");
  private static final Class<?> FINALIZER = classOrNull("java.lang.ref.Finalizer$FinalizerThread");
  private static final int MAX_KNOWN = 16;
  private static final StackWalker WALKER = StackWalker.getInstance();

  /** Reclaimer threads found so far (cleaner threads erase their thread locals after each run). */
  private static volatile Thread[] known = new Thread[0];

  /** Innocuous threads found not to be reclaimers. */
  private static final ThreadLocal<Boolean> CHECKED_NOT = new ThreadLocal<>();

  private Reclaimers() {}

  private static Class<?> classOrNull(String name) {
    try {
      return Class.forName(name, false, null);
    } catch (ClassNotFoundException | LinkageError e) {
      return null;
    }
  }

  static boolean onReclaimerThread() {
    Thread current = Thread.currentThread();
    Class<?> type = current.getClass();
    if (type != INNOCUOUS && type != FINALIZER) {
      return false;
    }
    for (Thread thread : known) {
      if (thread == current) {
        return true;
      }
    }
    if (CHECKED_NOT.get() != null) {
      return false;
    }
    if (runsReclaimerLoop()) {
      remember(current);
      return true;
    }
    CHECKED_NOT.set(Boolean.TRUE);
    return false;
  }

  private static boolean runsReclaimerLoop() {
    return WALKER.walk(
        frames ->
            frames.anyMatch(
                f ->
                    f.getClassName().equals("jdk.internal.ref.CleanerImpl")
                        || f.getClassName().startsWith("java.lang.ref.Finalizer")));
  }

  private static synchronized void remember(Thread thread) {
    Thread[] now = known;
    if (now.length < MAX_KNOWN) {
      Thread[] more = Arrays.copyOf(now, now.length + 1);
      more[now.length] = thread;
      known = more;
    }
  }
}
