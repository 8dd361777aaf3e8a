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

  // Heap profiling (rust/nativemem/src/jni/sampling.rs).

  /** {@code {available, unavailable_reason, active, thread_active, sample_interval_bytes}}. */
  public static native String samplingStatusJson();

  public static native void samplingSetActive(boolean active);

  public static native void samplingSetThreadActive(boolean active);

  /** Discards samples; a positive {@code intervalBytes} also sets the interval. Returns it. */
  public static native long samplingReset(long intervalBytes);

  /**
   * Dumps to {@code target} with its sidecar; objects under the directories in {@code saveFrom}
   * (one per line) and the perf map file (both may be null) are saved into it. Returns {@code
   * {path, symbols_dir, time_ms, sample_interval_bytes, sampled_bytes}}.
   */
  public static native String dumpProfileJson(String target, String saveFrom, String perfMap);
}
