package dev.nativemem.handles.tracking;

import dev.nativemem.internal.NativeBridge;
import java.lang.ref.Reference;
import java.lang.ref.ReferenceQueue;
import java.lang.ref.WeakReference;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The records of live owners and how each one ends: closed through a hook, transferred, found
 * collected while still owning (leaked), or closed later by a finalizer.
 */
final class OwnerRecords {
  final ReferenceQueue<Object> queue = new ReferenceQueue<>();

  /** RocksDB immutable references, keyed by their own owning flag (identity). */
  private final Map<Object, TrackedHandle> byFlag = new ConcurrentHashMap<>();

  /** Everything else, keyed by owner identity through {@link TrackedHandle.OwnerProbe}. */
  private final Map<Object, TrackedHandle> byOwner = new ConcurrentHashMap<>();

  /**
   * Leaked RocksDB handles whose class has a finalizer (rocksdbjni before 7), by owning flag: the
   * finalizer's {@code close()} will still free them, and release what they retain.
   */
  private final Map<AtomicBoolean, TrackedHandle> awaitingFinalizer = new ConcurrentHashMap<>();

  /** Finalizers or cleaners ending a handle right now: a check waits for them. */
  private final AtomicInteger reclaiming = new AtomicInteger();

  private final TrackerSites sites;
  private final ZipStreams zip;

  OwnerRecords(TrackerSites sites, ZipStreams zip) {
    this.sites = sites;
    this.zip = zip;
  }

  void add(TrackedHandle handle) {
    if (handle.owningFlag != null) {
      byFlag.put(handle.owningFlag, handle);
    } else {
      byOwner.put(handle, handle);
    }
  }

  /** The tracked record of a live owner: by its owning flag when it has one, else by identity. */
  TrackedHandle find(Object owner, AtomicBoolean owningFlag) {
    if (owningFlag != null) {
      return byFlag.get(owningFlag);
    }
    return byOwner.get(new TrackedHandle.OwnerProbe(owner));
  }

  /**
   * Ends a live owner's handle. A close run by a finalizer or cleaner counts as a leak: it ran only
   * because the garbage collector found the owner unclosed (rocksdbjni before 7).
   */
  void ended(Object owner, AtomicBoolean owningFlag, End how) {
    boolean reclaimed = how == End.CLOSED && Reclaimers.onReclaimerThread();
    if (!reclaimed) {
      end(owner, owningFlag, how, false);
      return;
    }
    reclaiming.incrementAndGet();
    try {
      end(owner, owningFlag, how, true);
    } finally {
      reclaiming.decrementAndGet();
    }
  }

  private void end(Object owner, AtomicBoolean owningFlag, End how, boolean reclaimed) {
    TrackedHandle handle =
        owningFlag != null
            ? byFlag.remove(owningFlag)
            : byOwner.remove(new TrackedHandle.OwnerProbe(owner));
    if (handle == null) {
      // Collected before, so whoever closes it now is a finalizer, on whichever thread.
      TrackedHandle leaked = owningFlag == null ? null : awaitingFinalizer.remove(owningFlag);
      if (leaked != null && how == End.CLOSED) {
        NativeBridge.call(
            "handle_finalized",
            Map.of("handle", leaked.id, "kind", sites.kindId(leaked.kind), "site", leaked.site));
      }
      return;
    }
    // A cleared reference means the collector found the owner unreachable before this close: a
    // finalizer runs it, also on the threads System.runFinalization starts.
    if (reclaimed || (how == End.CLOSED && handle.get() == null)) {
      how = owningFlag != null ? End.FINALIZED : End.LEAKED;
    }
    finish(handle, how);
  }

  static void finish(TrackedHandle handle, End how) {
    if (!handle.ended.compareAndSet(false, true)) {
      return;
    }
    NativeBridge.handlesEnded(handle.id, how.code);
    if (handle.scope != null) {
      handle.scope.onEnded(handle, how == End.FINALIZED ? End.LEAKED : how);
    }
  }

  /** Processes up to {@code max} collected owners. */
  void drain(int max) {
    for (int i = 0; i < max; i++) {
      Reference<?> ref = queue.poll();
      if (ref == null) {
        return;
      }
      collected(ref);
    }
  }

  private void collected(Reference<?> ref) {
    if (!(ref instanceof TrackedHandle)) {
      return; // a sentinel of collectGarbage
    }
    TrackedHandle handle = (TrackedHandle) ref;
    // Read the flag before taking the record: a finalizer (rocksdbjni < 7) may be closing the
    // owner right now; its close hook runs before the flag drops, so whoever takes the record
    // first sees the flag still set and calls it a leak.
    boolean owning = handle.stillOwning();
    boolean removed =
        handle.owningFlag != null
            ? byFlag.remove(handle.owningFlag, handle)
            : byOwner.remove(handle, handle);
    if (removed) {
      if (owning && handle.finalizable) {
        awaitingFinalizer.put(handle.owningFlag, handle);
      }
      finish(handle, owning ? End.LEAKED : End.CLOSED);
    }
  }

  /** RocksDB classes that override {@code close()} clear the owning flag without our hook. */
  void reconcileClosedByOverride() {
    for (TrackedHandle handle : byFlag.values()) {
      if (!handle.owningFlag.get() && byFlag.remove(handle.owningFlag, handle)) {
        finish(handle, End.CLOSED);
      }
    }
  }

  /**
   * Runs the garbage collector and processes what it found, waiting at most {@code timeoutMillis}.
   * Returns whether the collector finished within the time.
   */
  boolean collectGarbage(long timeoutMillis) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMillis);
    boolean sentinelSeen = false;
    for (int round = 0; round < 2; round++) {
      WeakReference<Object> sentinel = new WeakReference<>(new Object(), queue);
      sentinelSeen = false;
      System.gc();
      while (!sentinelSeen) {
        long left = TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime());
        if (left <= 0) {
          break;
        }
        Reference<?> ref = queue.remove(Math.min(left, 50));
        if (ref == null) {
          System.gc();
        } else if (ref == sentinel) {
          sentinelSeen = true;
        } else {
          collected(ref);
        }
      }
      Reference.reachabilityFence(sentinel);
      drain(Integer.MAX_VALUE);
    }
    reconcileClosedByOverride();
    while (reclaiming.get() > 0 && System.nanoTime() < deadline) {
      TimeUnit.MILLISECONDS.sleep(1);
    }
    return zip.awaitCleaner(deadline) && sentinelSeen;
  }

  /** Memory of the Java side's records, about: a weak reference and map entries per record. */
  long javaMemoryBytes() {
    long records = byFlag.size() + byOwner.size() + awaitingFinalizer.size() + zip.recordCount();
    return records * 120 + zip.countedByAddress() * 50L;
  }
}
