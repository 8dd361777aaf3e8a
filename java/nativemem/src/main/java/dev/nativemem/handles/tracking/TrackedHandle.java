package dev.nativemem.handles.tracking;

import java.lang.ref.ReferenceQueue;
import java.lang.ref.WeakReference;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * One tracked handle. Weak, so tracking never keeps the owner alive; what decides "leaked" outlives
 * the owner: the owner's own {@code AtomicBoolean} owning flag (RocksDB's immutable references) or
 * our {@link #ended} mark (everything else).
 */
final class TrackedHandle extends WeakReference<Object> {
  final long id;
  final String kind;

  /** Where the handle was created, or where a pooled stream was last taken from its pool. */
  volatile int site;

  final int hash;

  /** RocksDB's {@code owningHandle_}, or null when ownership is tracked by {@link #ended}. */
  final AtomicBoolean owningFlag;

  /** The scope that owns it, if any; none while it rests in a pool. */
  volatile HandleScopeBooks scope;

  /** Set once by whoever ends the handle first. */
  final AtomicBoolean ended = new AtomicBoolean();

  /** An {@code Inflater} resting in a pool: open, owned by the pool. */
  volatile boolean pooled;

  /** Its class has a finalizer that may free it after it was collected (rocksdbjni before 7). */
  boolean finalizable;

  TrackedHandle(
      Object owner,
      ReferenceQueue<Object> queue,
      long id,
      String kind,
      int site,
      AtomicBoolean owningFlag) {
    super(owner, queue);
    this.id = id;
    this.kind = kind;
    this.site = site;
    this.hash = System.identityHashCode(owner);
    this.owningFlag = owningFlag;
  }

  /** Whether the owner still owns its native memory, as far as its own state tells. */
  boolean stillOwning() {
    return owningFlag == null || owningFlag.get();
  }

  @Override
  public int hashCode() {
    return hash;
  }

  // equals stays identity: map lookups by owner go through OwnerProbe.

  /** Finds the TrackedHandle of a live owner in a hash map keyed by TrackedHandle. */
  static final class OwnerProbe {
    private final Object owner;

    OwnerProbe(Object owner) {
      this.owner = owner;
    }

    @Override
    public int hashCode() {
      return System.identityHashCode(owner);
    }

    @Override
    public boolean equals(Object other) {
      return other instanceof TrackedHandle && ((TrackedHandle) other).get() == owner;
    }
  }
}
