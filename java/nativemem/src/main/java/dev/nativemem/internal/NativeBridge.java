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
}
