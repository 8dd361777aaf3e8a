package dev.nativemem.metrics;

import dev.nativemem.memory.MemoryReader;
import dev.nativemem.profile.sampling.SamplingStatus;

/**
 * Whether heap profiling can run in this process and whether it samples now, as a metrics reading
 * needs them, each asked only as often as its answer can change. Under the import-rewriting engine
 * (no profiling jemalloc) "samples now" is the engine's own flag, read through the status.
 *
 * <p>Whether it can run, and by which engine, is fixed for the process's life, so it is asked once:
 * jemalloc's own sampler needs the jemalloc that serves {@code malloc} (which allocator that is, is
 * settled when the process starts, before any Java runs) built with profiling ({@code config.prof})
 * and started with it ({@code opt.prof}: jemalloc cannot switch it on in a running process); else
 * the import-rewriting engine runs wherever it is built (Linux x86-64 and aarch64).
 *
 * <p>Whether jemalloc samples now ({@code prof.active}) is not cached: nativemem's own {@code
 * HeapProfiler} is not the only one that can switch it. Any code of the process that calls {@code
 * mallctl} can, and so can another copy of nativemem's classes in another class loader (a restarted
 * Flink job, an application's copy beside the agent's), which a cache held here would never hear
 * of. It is read on every reading as one number ({@code mallctl("prof.active")}), not as the status
 * JSON.
 */
final class ProfilingState {
  /** Read once: null until then. */
  private static volatile Boolean canRun;

  /** Whether jemalloc profiles (else import rewriting, whose state only nativemem switches). */
  private static volatile boolean jemallocEngine;

  final boolean available;
  final boolean active;

  private ProfilingState(boolean available, boolean active) {
    this.available = available;
    this.active = active;
  }

  /** Availability as first read; {@code prof.active} now. */
  static ProfilingState read() {
    Boolean can = canRun;
    if (can == null) {
      SamplingStatus status = SamplingStatus.read();
      jemallocEngine = "jemalloc".equals(status.engine());
      can = status.available();
      canRun = can;
    }
    if (!can) {
      return new ProfilingState(false, false);
    }
    boolean active =
        jemallocEngine ? MemoryReader.mallctl("prof.active") != 0 : SamplingStatus.read().active();
    return new ProfilingState(true, active);
  }
}
