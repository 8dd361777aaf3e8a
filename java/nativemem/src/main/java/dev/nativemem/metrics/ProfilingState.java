package dev.nativemem.metrics;

import dev.nativemem.memory.MemoryReader;
import dev.nativemem.profile.sampling.SamplingStatus;

/**
 * Whether jemalloc heap profiling can run in this process and whether it samples now, as a metrics
 * reading needs them, each asked only as often as its answer can change.
 *
 * <p>Whether it can run is fixed for the process's life, so it is asked once: it needs the jemalloc
 * that serves {@code malloc} (which allocator that is, is settled when the process starts, before
 * any Java runs), built with profiling ({@code config.prof}, fixed at build) and started with it
 * ({@code opt.prof}, fixed at start: jemalloc cannot switch it on in a running process).
 *
 * <p>Whether it samples now ({@code prof.active}) is not cached: nativemem's own {@code
 * HeapProfiler} is not the only one that can switch it. Any code of the process that calls {@code
 * mallctl} can, and so can another copy of nativemem's classes in another class loader (a restarted
 * Flink job, an application's copy beside the agent's), which a cache held here would never hear
 * of. It is read on every reading as one number ({@code mallctl("prof.active")}), not as the status
 * JSON.
 */
final class ProfilingState {
  /** Read once: null until then. */
  private static volatile Boolean canRun;

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
      can = SamplingStatus.read().available();
      canRun = can;
    }
    return new ProfilingState(can, can && MemoryReader.mallctl("prof.active") != 0);
  }
}
