package dev.nativemem.internal;

/**
 * The only class with {@code native} methods: one-to-one with {@code rust/nativemem/src/jni}.
 * Structured results cross as JSON text so both sides stay small and typed at their ends.
 */
public final class NativeBridge {
  static {
    NativeLibraryLoader.load();
  }

  private NativeBridge() {}

  public static native String version();

  public static native String allocatorJson();

  public static native String processMemoryJson();

  public static native long mallctlRead(String key);

  /** Panics inside the native library; proves that panics arrive as Java exceptions. */
  public static native void selfTestPanic(String message);

  // Heap profiles (dev.nativemem.HeapProfile). A null base means "no base dump".

  /** Header of a heap_v2 dump as JSON; throws IllegalArgumentException if it is not one. */
  public static native String profileSummaryJson(String dump);

  /** Top sites (growth since {@code base} when given) as JSON. */
  public static native String profileReportJson(String dump, String base, int top);

  /** The analysis as text or collapsed stacks. */
  public static native String profileRender(String dump, String base, String format, int top);

  /** The analysis written to a new file {@code out} (mode 0600; never replaces a file). */
  public static native void profileWrite(
      String dump, String base, String format, int top, String out);
}
