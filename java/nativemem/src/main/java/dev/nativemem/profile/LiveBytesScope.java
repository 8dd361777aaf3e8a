package dev.nativemem.profile;

import dev.nativemem.base.NativeMemoryException;
import dev.nativemem.internal.FileTrees;
import java.io.IOException;
import java.lang.ref.Reference;
import java.lang.ref.ReferenceQueue;
import java.lang.ref.WeakReference;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Objects;
import java.util.concurrent.TimeUnit;

/**
 * The native bytes that one class's code left live: a heap profile (with Java frames) when the
 * scope opens, another when it is checked (after a GC and the JDK's cleaners), and the growth of
 * the sampled stacks whose Java frames pass through the class ({@link LiveBytes} says which count).
 * While any scope is open the process samples with Java frames; the last one to close puts both
 * back as it found them.
 *
 * <pre>{@code
 * try (LiveBytesScope scope = LiveBytesScope.open("import", ImportJob.class.getName())) {
 *   ImportJob.run();
 *   String failure = scope.check(4 << 20); // null, or what was left live and where
 * }
 * }</pre>
 */
public final class LiveBytesScope implements AutoCloseable {
  /** How long a check waits for the garbage collector and the JDK's cleaners. */
  public static final long GC_TIMEOUT_MILLIS = 5_000;

  private static final Object LOCK = new Object();
  private static int open;
  private static boolean startedSampling;
  private static boolean startedJavaFrames;

  private final String name;
  private final String className;
  private final Path dir;
  private final HeapProfile base;
  private boolean closed;

  private LiveBytesScope(String name, String className, Path dir, HeapProfile base) {
    this.name = name;
    this.className = className;
    this.dir = dir;
    this.base = base;
  }

  /**
   * Why scopes cannot run in this JVM (no profiling allocator, or no Java frames), with what to do;
   * empty when they can.
   */
  public static String unavailableReason() {
    HeapProfiler profiler = HeapProfiler.get();
    if (!profiler.isAvailable()) {
      return profiler.unavailableReason();
    }
    synchronized (LOCK) {
      if (open > 0 || profiler.isRecordingJavaFrames()) {
        return "";
      }
      try {
        profiler.javaFrames(true);
        profiler.javaFrames(false);
        return "";
      } catch (NativeMemoryException e) {
        return e.getMessage();
      }
    }
  }

  /**
   * Starts sampling with Java frames (if not on yet) and writes the base profile.
   *
   * @param name what the scope covers, for the failure's first line
   * @param className the binary name of the class whose frames attribute a sample to the scope (its
   *     nested classes' frames count too)
   * @throws NativeMemoryException if the process cannot sample with Java frames; the message says
   *     why
   */
  public static LiveBytesScope open(String name, String className) {
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(className, "className");
    acquireSampling();
    Path dir = null;
    try {
      dir =
          Files.createTempDirectory(
              "nativemem-live",
              PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
      HeapProfile base = HeapProfiler.get().dump(dir.resolve("base.heap"));
      return new LiveBytesScope(name, className, dir, base);
    } catch (IOException e) {
      releaseSampling();
      throw new dev.nativemem.base.NativeMemoryException(
          "cannot create a private directory for heap profiles under "
              + System.getProperty("java.io.tmpdir")
              + ": "
              + e
              + "; point -Djava.io.tmpdir to a writable directory",
          e);
    } catch (RuntimeException e) {
      if (dir != null) {
        FileTrees.deleteQuietly(dir);
      }
      releaseSampling();
      throw e;
    }
  }

  /**
   * Collects garbage, waits for the JDK's cleaners, writes a second profile and compares: the
   * failure text when the class's code left more than {@code maxBytes} live (its lines, native
   * stacks and estimated bytes), else null.
   */
  public String check(long maxBytes) {
    return measure().failure(name, maxBytes);
  }

  /** The bytes left live since the scope opened, by the class's lines. */
  public LiveBytes measure() {
    if (closed) {
      throw new IllegalStateException("the scope '" + name + "' is closed");
    }
    collectGarbageAndCleaners(GC_TIMEOUT_MILLIS);
    HeapProfile now = HeapProfiler.get().dump(dir.resolve("check-" + System.nanoTime() + ".heap"));
    ProfileRequest.Format collapsed = ProfileRequest.Format.COLLAPSED;
    String difference = now.request().base(base.path()).render(collapsed).run().rendered(collapsed);
    return LiveBytes.of(difference, className, now.sampleIntervalBytes());
  }

  /** Removes the profiles; the last scope open stops what {@link #open} started. */
  @Override
  public void close() {
    if (closed) {
      return;
    }
    closed = true;
    FileTrees.deleteQuietly(dir);
    releaseSampling();
  }

  private static void acquireSampling() {
    synchronized (LOCK) {
      if (open == 0) {
        HeapProfiler profiler = HeapProfiler.get();
        if (!profiler.isRecordingJavaFrames()) {
          profiler.javaFrames(true);
          startedJavaFrames = true;
        }
        if (!profiler.isActive()) {
          profiler.start();
          startedSampling = true;
        }
      }
      open++;
    }
  }

  private static void releaseSampling() {
    synchronized (LOCK) {
      if (--open > 0) {
        return;
      }
      HeapProfiler profiler = HeapProfiler.get();
      if (startedSampling) {
        profiler.stop();
        startedSampling = false;
      }
      if (startedJavaFrames) {
        profiler.javaFrames(false);
        startedJavaFrames = false;
      }
    }
  }

  /**
   * Runs the collector until a fresh weak reference is cleared (twice, so what a first cycle's
   * reference processing freed is collected too), then waits until the JDK's {@code Common-Cleaner}
   * thread (which ends unreachable {@code Inflater}s, {@code Deflater}s, direct buffers) is idle,
   * seen twice.
   */
  static void collectGarbageAndCleaners(long timeoutMillis) {
    long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMillis);
    ReferenceQueue<Object> queue = new ReferenceQueue<>();
    try {
      for (int round = 0; round < 2; round++) {
        WeakReference<Object> sentinel = new WeakReference<>(new Object(), queue);
        System.gc();
        while (queue.remove(10) != sentinel && System.nanoTime() < deadline) {
          System.gc();
        }
        Reference.reachabilityFence(sentinel);
      }
      Thread cleaner = commonCleaner();
      int idle = 0;
      while (cleaner != null && idle < 2 && System.nanoTime() < deadline) {
        TimeUnit.MILLISECONDS.sleep(10);
        idle = isWaitingForWork(cleaner) ? idle + 1 : 0;
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  private static Thread commonCleaner() {
    for (Thread thread : Thread.getAllStackTraces().keySet()) {
      if ("Common-Cleaner".equals(thread.getName())) {
        return thread;
      }
    }
    return null;
  }

  /** Waiting in its queue's {@code remove}, with nothing to run. */
  private static boolean isWaitingForWork(Thread cleaner) {
    Thread.State state = cleaner.getState();
    if (state != Thread.State.TIMED_WAITING && state != Thread.State.WAITING) {
      return false;
    }
    for (StackTraceElement frame : cleaner.getStackTrace()) {
      if (frame.getClassName().equals("java.lang.ref.ReferenceQueue")
          && frame.getMethodName().equals("remove")) {
        return true;
      }
    }
    return false;
  }

  @Override
  public String toString() {
    return "live bytes scope '" + name + "' of " + className + (closed ? " (closed)" : "");
  }
}
