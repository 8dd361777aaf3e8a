package dev.nativemem.handles.tracking;

import java.util.concurrent.ConcurrentHashMap;
import java.util.function.LongSupplier;

/**
 * The rate half of {@code level=sampled}'s decision: each kind has its creation stacks recorded at
 * {@link #PER_SECOND} a second whatever the interval, in bursts of up to {@link #BURST}, so a kind
 * created rarely (a few {@code ColumnFamilyOptions} a minute, several of them in the same
 * millisecond when Flink starts its manual compactions together) has every stack recorded and every
 * leak of it names its line, while a kind created thousands of times a second is held to that rate
 * plus one in {@code interval}. Each kind is a token bucket: {@link #BURST} tokens, one refilled
 * every 1/{@link #PER_SECOND} s. A clock read and a short lock of the kind's bucket per creation
 * not taken by the interval; one small record per kind.
 */
final class KindSampling {
  /** Stacks per kind and second recorded beyond one in {@code interval}, in the long run. */
  static final int PER_SECOND = 4;

  /** Stacks of one kind recorded at once, before the rate holds it. */
  static final int BURST = 32;

  private static final long TOKEN_NANOS = 1_000_000_000L / PER_SECOND;

  private final ConcurrentHashMap<String, Bucket> buckets = new ConcurrentHashMap<>();
  private final LongSupplier nanoTime;

  KindSampling() {
    this(System::nanoTime);
  }

  /** With {@code nanoTime} as the clock (tests). */
  KindSampling(LongSupplier nanoTime) {
    this.nanoTime = nanoTime;
  }

  /** Whether this creation of {@code kind} is within its kind's rate. */
  boolean withinRate(String kind) {
    Bucket bucket = buckets.get(kind);
    if (bucket == null) {
      bucket = buckets.computeIfAbsent(kind, k -> new Bucket(nanoTime.getAsLong()));
    }
    return bucket.take(nanoTime.getAsLong());
  }

  /**
   * A kind's tokens: {@link #BURST} at first, one more every {@link #TOKEN_NANOS}, at most that.
   */
  private static final class Bucket {
    private long tokens = BURST;
    private long refilled;

    Bucket(long now) {
      refilled = now;
    }

    synchronized boolean take(long now) {
      long earned = (now - refilled) / TOKEN_NANOS;
      if (earned > 0) {
        tokens = Math.min(BURST, tokens + earned);
        refilled = tokens == BURST ? now : refilled + earned * TOKEN_NANOS;
      }
      if (tokens == 0) {
        return false;
      }
      tokens--;
      return true;
    }
  }
}
