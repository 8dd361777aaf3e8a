package dev.nativemem.apps.flinkmetrics;

import dev.nativemem.handles.NativeHandles;
import dev.nativemem.handles.TrackedResource;

/**
 * One open handle of a kind of the test's own, tracked through the API (this JVM runs without the
 * agent): it gives the handle series a kind tag to carry.
 */
final class PlantedHandle {
  static final String KIND = "PlantedHandle";
  private static TrackedResource<AutoCloseable> open;

  private PlantedHandle() {}

  static synchronized void ensureOpen() {
    if (open == null) {
      open = NativeHandles.track(() -> {}, KIND);
    }
  }
}
