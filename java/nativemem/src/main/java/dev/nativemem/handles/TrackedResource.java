package dev.nativemem.handles;

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

  /** Closes the resource, then marks the handle closed (also when {@code close} throws). */
  @Override
  public void close() throws Exception {
    try {
      resource.close();
    } finally {
      HandleTracker.get().ended(this, null, End.CLOSED);
    }
  }
}
