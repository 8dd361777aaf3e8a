package dev.nativemem.base;

/**
 * Something nativemem could not do. The message says what went wrong and what to do next.
 *
 * <p>Subclasses mark the failures a caller may handle differently, for example {@link
 * AllocatorUnavailableException} when the process allocator lacks a capability.
 */
public class NativeMemoryException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  public NativeMemoryException(String message) {
    super(message);
  }

  public NativeMemoryException(String message, Throwable cause) {
    super(message, cause);
  }
}
