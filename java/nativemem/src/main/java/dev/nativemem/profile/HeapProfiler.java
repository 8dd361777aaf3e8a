package dev.nativemem.profile;

import dev.nativemem.base.NativeMemoryException;
import dev.nativemem.internal.Json;
import dev.nativemem.internal.NativeBridge;
import dev.nativemem.internal.NativeLibraryLoader;
import dev.nativemem.profile.sampling.SamplingStatus;
import java.nio.file.Path;
import java.util.Map;

/**
 * Sampling heap profiles of this process ({@code NativeMemory.profiling()}).
 *
 * <p>About one allocation per {@linkplain #sampleIntervalBytes() interval} of allocated bytes is
 * sampled with its native stack, by one of two engines ({@link #toString()} names it and why): the
 * jemalloc serving this process when it was started with profiling ({@code opt.prof}; the preload
 * allocator does that by default, inactive), else, on Linux x86-64 and aarch64, import rewriting,
 * which needs nothing at the JVM's start but does not see what libc allocates inside itself. Either
 * way {@link #start()} can begin sampling in a running JVM. Dump with {@code
 * NativeMemory.dumpProfile()}.
 *
 * <p>Every method other than {@link #isAvailable()} and {@link #unavailableReason()} throws {@link
 * NativeMemoryException} when profiling cannot run; its message says how to start the JVM so that
 * it can.
 */
public final class HeapProfiler {
  private static final HeapProfiler INSTANCE = new HeapProfiler();

  private HeapProfiler() {}

  /** The profiler of this JVM (one per process, whichever engine runs); loads the library. */
  public static HeapProfiler get() {
    NativeLibraryLoader.load();
    return INSTANCE;
  }

  /**
   * Writes a heap profile to {@code path} with its symbols sidecar, as {@code
   * NativeMemory.dumpProfile(Path)} says (which calls this).
   */
  public HeapProfile dump(Path path) {
    return ProfileDump.write(path);
  }

  /**
   * Writes a heap profile to {@code -Dnativemem.profile.dir} under a default name, keeping the
   * newest {@code -Dnativemem.profile.keep}, as {@code NativeMemory.dumpProfile()} says.
   */
  public HeapProfile dumpDefault() {
    return ProfileDump.writeDefault();
  }

  /**
   * Whether an engine can profile here: a jemalloc built and started with profiling, else, on Linux
   * x86-64 and aarch64, import rewriting, which any allocator allows.
   */
  public boolean isAvailable() {
    return SamplingStatus.read().available();
  }

  /** Why profiling is unavailable and how to fix it; empty when it is available. */
  public String unavailableReason() {
    return SamplingStatus.read().unavailableReason();
  }

  /**
   * Whether sampling is on now (jemalloc's {@code prof.active}, or the import-rewriting engine's).
   */
  public boolean isActive() {
    return available().active();
  }

  /**
   * Starts sampling in the whole process: jemalloc's {@code prof.active=true}, or the
   * import-rewriting engine rewriting every loaded library's allocation imports first.
   */
  public void start() {
    NativeBridge.call("sampling_active", Map.of("active", true));
  }

  /**
   * Stops sampling; samples already taken stay in the next dump while their memory lives (under
   * jemalloc; the import-rewriting engine writes the imports back, and its dumps show what was live
   * at the stop).
   */
  public void stop() {
    NativeBridge.call("sampling_active", Map.of("active", false));
  }

  /**
   * Whether allocations by the calling thread are sampled (jemalloc's {@code thread.prof.active};
   * the import-rewriting engine samples every thread while it is on).
   */
  public boolean isThreadActive() {
    return available().threadActive();
  }

  /**
   * Samples the calling thread's allocations or not; other threads are unaffected.
   *
   * @throws NativeMemoryException under the import-rewriting engine, which samples every thread
   */
  public void setThreadActive(boolean active) {
    NativeBridge.call("sampling_thread_active", Map.of("active", active));
  }

  /** Average bytes allocated between two samples (jemalloc's {@code 2^prof.lg_sample}). */
  public long sampleIntervalBytes() {
    return available().sampleIntervalBytes();
  }

  /**
   * Discards every sample taken so far ({@code prof.reset}) and samples from now on every {@code
   * bytes} on average: jemalloc takes the power of two nearest it, and changes the interval only as
   * part of a reset; the import-rewriting engine takes it as it is.
   *
   * @return the interval now in effect, in bytes
   * @throws IllegalArgumentException if {@code bytes} is not positive
   */
  public long resetWithSampleInterval(long bytes) {
    if (bytes <= 0) {
      throw new IllegalArgumentException(
          "sample interval must be a positive number of bytes, got "
              + bytes
              + "; jemalloc's default is 524288 (512 KiB)");
    }
    return reset(bytes);
  }

  /**
   * Records the Java frames above each sampled native allocation, or stops doing so (off by
   * default; {@code -Dnativemem.profile.javaFrames=true} turns it on at start). Dumps then show
   * {@code inflateInit2_ ← java.util.zip.Inflater.<init>(Inflater.java:NN) ← …} down to the
   * application's line. Needs a HotSpot JVM ({@code AsyncGetCallTrace}) and, under jemalloc,
   * jemalloc 5.3 or later (its {@code experimental.hooks.prof_backtrace}); the import-rewriting
   * engine records them itself. Samples already taken keep their stacks.
   *
   * @return whether Java frames are recorded now
   * @throws NativeMemoryException if profiling, or Java frames, cannot run here; the message says
   *     why
   */
  public boolean javaFrames(boolean on) {
    available();
    return Json.bool(
        Json.parseObject(NativeBridge.call("java_frames", Map.of("on", on))), "enabled");
  }

  /** Whether Java frames are recorded in samples now ({@link #javaFrames(boolean)}). */
  public boolean isRecordingJavaFrames() {
    return Json.bool(Json.parseObject(NativeBridge.call("java_frames_status")), "enabled");
  }

  /** Discards every sample taken so far ({@code prof.reset}), keeping the interval. */
  public void reset() {
    reset(0);
  }

  /** Discards samples; a positive {@code intervalBytes} also sets the interval, returned. */
  private static long reset(long intervalBytes) {
    return NativeBridge.callForNumber("sampling_reset", Map.of("interval_bytes", intervalBytes));
  }

  @Override
  public String toString() {
    SamplingStatus s = SamplingStatus.read();
    if (!s.available()) {
      return "heap profiling unavailable: " + s.unavailableReason();
    }
    return "heap profiling "
        + (s.active() ? "active" : "ready (inactive)")
        + ", sample interval "
        + s.sampleIntervalBytes()
        + " bytes, engine "
        + s.engine()
        + (s.engineFigures().isEmpty() ? "" : " (" + s.engineFigures() + ")")
        + ": "
        + s.engineReason();
  }

  private static SamplingStatus available() {
    return SamplingStatus.read().requireAvailable();
  }
}
