package dev.nativemem;

import dev.nativemem.internal.Json;
import dev.nativemem.internal.NativeBridge;
import java.util.Map;

/**
 * Sampling heap profiles from the jemalloc serving this process ({@link NativeMemory#profiling()}).
 *
 * <p>jemalloc samples about one allocation per {@linkplain #sampleIntervalBytes() interval} of
 * allocated bytes and records its native stack. Profiling must be enabled when the process starts
 * ({@code opt.prof}); the preload allocator does that by default, inactive, so {@link #start()} can
 * begin sampling in any running JVM. Dump with {@link NativeMemory#dumpProfile()}.
 *
 * <p>Every method other than {@link #isAvailable()} and {@link #unavailableReason()} throws {@link
 * ProfilingUnavailableException} when profiling cannot run; its message says how to start the JVM
 * so that it can.
 */
public final class HeapProfiler {
  static final HeapProfiler INSTANCE = new HeapProfiler();

  private HeapProfiler() {}

  /** Whether jemalloc serves {@code malloc}, was built with profiling, and started with it. */
  public boolean isAvailable() {
    return Boolean.TRUE.equals(status().get("available"));
  }

  /** Why profiling is unavailable and how to fix it; empty when it is available. */
  public String unavailableReason() {
    return String.valueOf(status().get("unavailable_reason"));
  }

  /** Whether jemalloc is sampling now ({@code prof.active}). */
  public boolean isActive() {
    return Boolean.TRUE.equals(available().get("active"));
  }

  /** Starts sampling in the whole process ({@code prof.active=true}). */
  public void start() {
    NativeBridge.samplingSetActive(true);
  }

  /** Stops sampling; samples already taken stay in the next dump while their memory lives. */
  public void stop() {
    NativeBridge.samplingSetActive(false);
  }

  /** Whether allocations by the calling thread are sampled ({@code thread.prof.active}). */
  public boolean isThreadActive() {
    return Boolean.TRUE.equals(available().get("thread_active"));
  }

  /** Samples the calling thread's allocations or not; other threads are unaffected. */
  public void setThreadActive(boolean active) {
    NativeBridge.samplingSetThreadActive(active);
  }

  /** Average bytes allocated between two samples ({@code 2^prof.lg_sample}). */
  public long sampleIntervalBytes() {
    return ((Number) available().get("sample_interval_bytes")).longValue();
  }

  /**
   * Sets the average sample interval to the power of two nearest {@code bytes}, which also discards
   * every sample taken so far ({@code prof.reset}).
   *
   * @return the interval now in effect, in bytes
   * @throws IllegalArgumentException if {@code bytes} is not positive
   */
  public long sampleInterval(long bytes) {
    if (bytes <= 0) {
      throw new IllegalArgumentException(
          "sample interval must be a positive number of bytes, got "
              + bytes
              + "; jemalloc's default is 524288 (512 KiB)");
    }
    return NativeBridge.samplingReset(bytes);
  }

  /** Discards every sample taken so far ({@code prof.reset}), keeping the interval. */
  public void reset() {
    NativeBridge.samplingReset(0);
  }

  @Override
  public String toString() {
    Map<String, Object> s = status();
    if (!Boolean.TRUE.equals(s.get("available"))) {
      return "heap profiling unavailable: " + s.get("unavailable_reason");
    }
    return "heap profiling "
        + (Boolean.TRUE.equals(s.get("active")) ? "active" : "ready (inactive)")
        + ", sample interval "
        + s.get("sample_interval_bytes")
        + " bytes";
  }

  private static Map<String, Object> status() {
    return Json.parseObject(NativeBridge.samplingStatusJson());
  }

  private static Map<String, Object> available() {
    Map<String, Object> s = status();
    if (!Boolean.TRUE.equals(s.get("available"))) {
      throw new ProfilingUnavailableException(String.valueOf(s.get("unavailable_reason")));
    }
    return s;
  }
}
