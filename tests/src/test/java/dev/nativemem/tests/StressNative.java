package dev.nativemem.tests;

/**
 * The JNI methods of {@code stress/stress_native.c} (a test resource, compiled at test time):
 * native code whose allocations go through its own imports, as a JNI library's do.
 */
final class StressNative {
  private StressNative() {}

  /**
   * {@code rounds} rounds of malloc, calloc, realloc (grow, shrink, to 0), reallocarray,
   * posix_memalign, aligned_alloc, memalign, valloc, pvalloc and free of about {@code size} bytes.
   */
  static native long churn(int rounds, int size);

  /** Reads {@code path} with getline into a buffer glibc grows itself, then an open_memstream. */
  static native long getlines(String path);

  /** dlopen of {@code path}, allocations from its code, dlclose; the blocks made, or below 0. */
  static native long dlopenChurn(String path);
}
