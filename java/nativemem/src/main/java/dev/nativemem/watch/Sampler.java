package dev.nativemem.watch;

import dev.nativemem.handles.tracking.HandleTracker;
import dev.nativemem.internal.NativeBridge;

/**
 * Takes one sample into the ring: the native figures in one JNI call into a preallocated array, the
 * heap from {@link Runtime} (no {@code MemoryUsage} object), so a sample allocates nothing.
 */
final class Sampler {
  private final long[] nativeRow = new long[SampleRing.NATIVE_SLOTS];
  private final long[] row = new long[SampleRing.COLUMNS];
  private final Runtime runtime = Runtime.getRuntime();

  void sampleInto(SampleRing ring) {
    HandleTracker tracker = HandleTracker.get();
    boolean tracking = tracker.agentActive();
    if (tracking) {
      tracker.settleForSample();
    }
    NativeBridge.watchSample(nativeRow);
    row[SampleRing.TIME] = System.currentTimeMillis();
    System.arraycopy(nativeRow, 0, row, SampleRing.LIMIT, SampleRing.NATIVE_SLOTS);
    if (!tracking) {
      row[SampleRing.HANDLES_OPEN] = -1;
      row[SampleRing.HANDLES_LEAKED] = -1;
    }
    long committed = runtime.totalMemory();
    row[SampleRing.HEAP_COMMITTED] = committed;
    row[SampleRing.HEAP_USED] = committed - runtime.freeMemory();
    ring.add(row);
  }
}
