package dev.nativemem.handles.tracking;

import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The rate half of {@code level=sampled}'s decision: each kind has its creation stacks recorded up
 * to {@link #PER_SECOND} times a second whatever the interval, so a kind created rarely (a few
 * {@code ColumnFamilyOptions} a minute) has every stack recorded and every leak of it names its
 * line, while a kind created thousands of times a second is held to that rate plus one in {@code
 * interval}. One volatile read and a clock read per creation; one small record per kind.
 */
final class KindSampling {
  /** Stacks per kind and second recorded beyond one in {@code interval}. */
  static final int PER_SECOND = 4;

  private static final long SECOND_NANOS = 1_000_000_000L;

  private final ConcurrentHashMap<String, Window> windows = new ConcurrentHashMap<>();

  /** Whether this creation of {@code kind} is within its kind's rate. */
  boolean withinRate(String kind) {
    Window window = windows.get(kind);
    if (window == null) {
      window = windows.computeIfAbsent(kind, k -> new Window());
    }
    long now = System.nanoTime();
    if (now - window.start >= SECOND_NANOS) {
      // A race here only lets a few more through: the rate is a bound, not an exact count.
      window.start = now;
      window.taken.set(0);
    }
    return window.taken.get() < PER_SECOND && window.taken.incrementAndGet() <= PER_SECOND;
  }

  private static final class Window {
    volatile long start = System.nanoTime() - SECOND_NANOS;
    final AtomicInteger taken = new AtomicInteger();
  }
}
