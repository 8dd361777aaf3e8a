package dev.nativemem.handles;

import dev.nativemem.base.NativeMemoryException;
import dev.nativemem.handles.tracking.End;
import dev.nativemem.handles.tracking.HandleTracker;

/**
 * A resource the application registered with {@link NativeHandles#track}: close this instead of the
 * resource. If it is garbage-collected without {@link #close()}, it counts as leaked.
 */
public final class TrackedResource<T extends AutoCloseable> implements AutoCloseable {
  private final T resource;

  TrackedResource(T resource) {
    this.resource = resource;
  }

  public T get() {
    return resource;
  }

  /**
   * Closes the resource, then marks the handle closed (also when {@code close} throws).
   *
   * @throws NativeMemoryException wrapping a checked exception of the resource's {@code close} (its
   *     cause); unchecked ones pass through as they are
   */
  @Override
  public void close() {
    try {
      resource.close();
    } catch (RuntimeException e) {
      throw e;
    } catch (Exception e) {
      throw new NativeMemoryException(
          "closing the tracked " + resource.getClass().getName() + " failed: " + e, e);
    } finally {
      HandleTracker.get().ended(this, null, End.CLOSED);
    }
  }
}
