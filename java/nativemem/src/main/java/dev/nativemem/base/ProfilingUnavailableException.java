package dev.nativemem.base;

import dev.nativemem.base.text.OwnJar;

/**
 * Heap profiling cannot run in this process: glibc serves {@code malloc}, or the jemalloc that does
 * was built without profiling or started without {@code prof:true}. Profiling cannot be switched on
 * in a running process; the message gives the exact {@code LD_PRELOAD} and {@code MALLOC_CONF}
 * settings for the next start.
 */
public class ProfilingUnavailableException extends NativeMemoryException {
  private static final long serialVersionUID = 1L;

  public ProfilingUnavailableException(String message) {
    super(OwnJar.withThisJar(message));
  }
}
