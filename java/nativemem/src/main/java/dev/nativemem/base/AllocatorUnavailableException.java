package dev.nativemem.base;

/**
 * The allocator serving this process cannot answer the request, typically because glibc rather than
 * jemalloc serves {@code malloc}. The message names the {@code LD_PRELOAD} setting that fixes it.
 */
public class AllocatorUnavailableException extends NativeMemoryException {
  private static final long serialVersionUID = 1L;

  public AllocatorUnavailableException(String message) {
    super(message);
  }
}
