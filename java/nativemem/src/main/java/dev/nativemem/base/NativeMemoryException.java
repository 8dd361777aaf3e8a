package dev.nativemem.base;

import dev.nativemem.base.text.OwnJar;

/**
 * Something nativemem could not do. The message says what went wrong and what to do next: when the
 * allocator lacks a capability (glibc serves {@code malloc}, or jemalloc was built or started
 * without profiling), it names the {@code LD_PRELOAD} and {@code MALLOC_CONF} settings for the next
 * start, with this jar's {@code env} command. Ask before acting rather than catching to tell cases
 * apart: {@code NativeMemory.allocator().isJemalloc()}, {@code
 * NativeMemory.profiling().isAvailable()}.
 */
public class NativeMemoryException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  public NativeMemoryException(String message) {
    super(OwnJar.withThisJar(message));
  }

  public NativeMemoryException(String message, Throwable cause) {
    super(OwnJar.withThisJar(message), cause);
  }
}
