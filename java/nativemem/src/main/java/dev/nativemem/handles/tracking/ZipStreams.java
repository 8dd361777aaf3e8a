package dev.nativemem.handles.tracking;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;

/**
 * The zlib streams of {@code Inflater} and {@code Deflater}.
 *
 * <p>The JDK frees each stream exactly once, in its {@code ZStreamRef.run()}: called by {@code
 * end()} on the caller's thread, or by a cleaner's thread once the owner became unreachable (see
 * {@link Reclaimers}). Hooking that one place tells closed from leaked without a weak reference or
 * a map entry of ours, so a stream that needs no creation stack costs two counter increments.
 * Streams that need a record (a stack is recorded, or a scope is open) are kept by zlib address.
 */
final class ZipStreams {
  /** Codes the instrumented JDK classes pass: index into {@link #kinds}. */
  static final int INFLATER = 0;

  static final int DEFLATER = 1;

  /** Value in {@link #byAddress} of a stream that is counted, not recorded. */
  private static final Object COUNTED = new Object();

  private final Kind[] kinds = {new Kind("Inflater"), new Kind("Deflater")};

  /** Recorded streams (a {@link TrackedHandle}) and, when {@link #exact}, counted ones too. */
  private final Map<Long, Object> byAddress = new ConcurrentHashMap<>();

  private final AtomicInteger recorded = new AtomicInteger();

  /** Recorded streams by owner identity, for the pool hooks that see only the owner. */
  private final Map<Object, TrackedHandle> recordedByOwner = new ConcurrentHashMap<>();

  /**
   * Whether streams created before tracking began may still be freed: after a late attach. Then
   * every counted stream is kept by address too, so that a stream we never saw created is not
   * counted as closed.
   */
  private volatile boolean exact;

  /** Counters of one zlib kind, for the streams that have no record. */
  static final class Kind {
    final String name;
    volatile boolean tracked;
    private final LongAdder created = new LongAdder();
    private final LongAdder closed = new LongAdder();
    private final LongAdder leaked = new LongAdder();
    private long sentCreated;
    private long sentClosed;
    private long sentLeaked;

    Kind(String name) {
      this.name = name;
    }

    /**
     * What was counted since the last call: created, closed, leaked. Ends are read before
     * creations, so a stream's end is never sent before its creation.
     */
    synchronized long[] takeNew() {
      long leakedNow = leaked.sum();
      long closedNow = closed.sum();
      long createdNow = created.sum();
      long[] delta = {
        createdNow - sentCreated, closedNow - sentClosed, leakedNow - sentLeaked,
      };
      sentCreated = createdNow;
      sentClosed = closedNow;
      sentLeaked = leakedNow;
      return delta;
    }
  }

  void configure(TrackingOptions options, boolean streamsMayPredate) {
    for (Kind kind : kinds) {
      kind.tracked = options.tracks(kind.name, TrackingOptions.ZIP_GROUP);
    }
    exact = streamsMayPredate;
  }

  /** The kind of a code from the instrumented classes, or null if it is not tracked. */
  Kind kind(int code) {
    if (code < 0 || code >= kinds.length) {
      return null;
    }
    Kind kind = kinds[code];
    return kind.tracked ? kind : null;
  }

  Kind[] kinds() {
    return kinds;
  }

  void count(Kind kind, long address) {
    if (exact) {
      byAddress.put(address, COUNTED);
    }
    kind.created.increment();
  }

  void record(long address, TrackedHandle handle) {
    recorded.incrementAndGet();
    recordedByOwner.put(handle, handle);
    byAddress.put(address, handle);
  }

  /** The record of a recorded stream, by its owner; null when the stream is only counted. */
  TrackedHandle recordOf(Object owner) {
    return recorded.get() > 0 ? recordedByOwner.get(new TrackedHandle.OwnerProbe(owner)) : null;
  }

  /**
   * The stream at {@code address} is being freed. Returns its record for the caller to end and then
   * {@link #forget}, or null when it was counted here (or never seen created).
   */
  TrackedHandle freed(Kind kind, long address, boolean leaked) {
    if (exact || recorded.get() > 0) {
      Object entry = byAddress.get(address);
      if (entry instanceof TrackedHandle) {
        return (TrackedHandle) entry; // stays listed until ended, for awaitCleaner
      }
      if (exact && (entry == null || !byAddress.remove(address, COUNTED))) {
        return null; // created before tracking began
      }
    }
    (leaked ? kind.leaked : kind.closed).increment();
    return null;
  }

  int recordCount() {
    return recorded.get();
  }

  /** Streams kept by address only, after a late attach. */
  long countedByAddress() {
    return exact ? byAddress.size() - recorded.get() : 0;
  }

  /** Drops the record of a freed stream, once it has been ended. */
  void forget(long address, TrackedHandle handle) {
    if (byAddress.remove(address, handle)) {
      recordedByOwner.remove(handle, handle);
      recorded.decrementAndGet();
    }
  }

  /**
   * Waits until the cleaner has freed every recorded stream whose owner was collected, or the
   * deadline passes. Returns whether it caught up.
   */
  boolean awaitCleaner(long deadlineNanos) throws InterruptedException {
    while (true) {
      boolean pending = false;
      for (Object entry : byAddress.values()) {
        if (entry instanceof TrackedHandle && ((TrackedHandle) entry).get() == null) {
          pending = true;
          break;
        }
      }
      if (!pending) {
        return true;
      }
      if (System.nanoTime() >= deadlineNanos) {
        return false;
      }
      TimeUnit.MILLISECONDS.sleep(5);
    }
  }
}
