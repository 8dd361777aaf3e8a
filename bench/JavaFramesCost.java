import dev.nativemem.profile.HeapProfiler;
import dev.nativemem.NativeMemory;
import dev.nativemem.internal.NativeBridge;

/**
 * What Java frames add to one sampled allocation: every allocation sampled ({@code lg_sample} 0),
 * the same zlib churn timed with Java frames off and on in alternating rounds, the difference
 * divided by the samples the hook saw. Run under a profiling-ready jemalloc; {@code
 * JavaFramesCost <rounds> <streams per round> <extra stack depth>}.
 */
public final class JavaFramesCost {
  public static void main(String[] args) throws Exception {
    int rounds = Integer.parseInt(args[0]);
    int streams = Integer.parseInt(args[1]);
    int depth = Integer.parseInt(args[2]);
    HeapProfiler profiler = NativeMemory.profiling();
    profiler.resetWithSampleInterval(1);
    profiler.start();
    byte[] plain = new byte[4096];
    byte[] packed = new byte[8192];
    byte[] unpacked = new byte[4096];
    atDepth(depth, () -> churn(streams, plain, packed, unpacked)); // warm-up
    long offNanos = 0;
    long onNanos = 0;
    long samples = 0;
    for (int round = 0; round < rounds; round++) {
      profiler.javaFrames(false);
      offNanos += atDepth(depth, () -> churn(streams, plain, packed, unpacked));
      long before = samples();
      profiler.javaFrames(true);
      onNanos += atDepth(depth, () -> churn(streams, plain, packed, unpacked));
      samples += samples() - before;
    }
    profiler.javaFrames(false);
    profiler.stop();
    System.out.printf(
        "SAMPLES %d%nOFF_NS_PER_SAMPLE %.0f%nEXTRA_NS_PER_SAMPLE %.0f%n",
        samples, (double) offNanos / samples, (double) (onNanos - offNanos) / samples);
  }

  private static long samples() {
    String json = NativeBridge.call("java_frames_status");
    String key = "\"samples\":";
    int at = json.indexOf(key) + key.length();
    int end = at;
    while (Character.isDigit(json.charAt(end))) {
      end++;
    }
    return Long.parseLong(json.substring(at, end));
  }

  /** Runs {@code work} below {@code depth} more Java frames; returns its nanoseconds. */
  private static long atDepth(int depth, Runnable work) {
    if (depth > 0) {
      return atDepth(depth - 1, work);
    }
    long start = System.nanoTime();
    work.run();
    return System.nanoTime() - start;
  }

  private static void churn(int streams, byte[] plain, byte[] packed, byte[] unpacked) {
    try {
      for (int i = 0; i < streams; i++) {
        ZlibRoundTrip.run(plain, packed, unpacked);
      }
    } catch (java.util.zip.DataFormatException e) {
      throw new IllegalStateException(e);
    }
  }
}
