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

  // Allocator statistics, remedies and the native side of the memory breakdown.

  public static native String allocatorStatsJson();

  /** jemalloc's {@code malloc_stats_print} JSON, or glibc's {@code malloc_info} XML. */
  public static native String allocatorReport();

  public static native String nativeViewJson();

  public static native String purgeJson();

  public static native String setDecayJson(long dirtyMs, long muzzyMs);

  public static native String enableBackgroundThreadsJson();

  public static native String flushThreadCacheJson();

  public static native String trimJson();
}
