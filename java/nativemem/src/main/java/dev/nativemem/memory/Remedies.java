package dev.nativemem.memory;

import dev.nativemem.base.AllocatorUnavailableException;
import dev.nativemem.base.NativeMemoryException;
import dev.nativemem.internal.Json;
import dev.nativemem.internal.JsonBinding;
import dev.nativemem.internal.NativeBridge;
import java.util.Map;

/**
 * Actions that give native memory back at run time. Each returns resident bytes before and after.
 * jemalloc remedies throw {@link AllocatorUnavailableException} under glibc; {@link #trim()} is
 * glibc's.
 */
public final class Remedies {
  private static final Remedies INSTANCE = new Remedies();

  private Remedies() {}

  /** The remedies (one set per process); the caller has loaded the library. */
  static Remedies get() {
    return INSTANCE;
  }

  /** Purges every unused dirty page of every jemalloc arena now. */
  public RemedyResult purge() {
    return result(NativeBridge.call("purge"));
  }

  /**
   * Sets jemalloc's dirty and muzzy decay times for every existing arena and as the default for new
   * ones. {@code -1} never purges; {@code 0} purges at once.
   *
   * @throws IllegalArgumentException if a value is below -1 or above jemalloc's maximum
   */
  public RemedyResult setDecay(long dirtyDecayMs, long muzzyDecayMs) {
    return result(
        NativeBridge.call("set_decay", Map.of("dirty_ms", dirtyDecayMs, "muzzy_ms", muzzyDecayMs)));
  }

  /** Starts jemalloc's background purging threads. */
  public RemedyResult enableBackgroundThreads() {
    return result(NativeBridge.call("enable_background_threads"));
  }

  /** Returns the calling thread's cached objects to their arenas. */
  public RemedyResult flushThreadCache() {
    return result(NativeBridge.call("flush_thread_cache"));
  }

  /**
   * glibc's {@code malloc_trim(0)}.
   *
   * @throws NativeMemoryException under jemalloc (use {@link #purge()})
   */
  public RemedyResult trim() {
    return result(NativeBridge.call("trim"));
  }

  /** The remedy's answer from the native library, as its result. */
  private static RemedyResult result(String answer) {
    return JsonBinding.read(RemedyResult.class, Json.parseObject(answer));
  }
}
