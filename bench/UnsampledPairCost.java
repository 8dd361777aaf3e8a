import dev.nativemem.NativeMemory;
import dev.nativemem.profile.HeapProfiler;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.Arrays;

/**
 * What the import-rewriting engine adds to a malloc+free pair it does not sample
 * (bench/unsampled-pair.sh; not a test): a C loop of malloc+free pairs in a JNI library
 * (bench/unsampled_pair.c, through its own imports) is timed in this thread's CPU time with the
 * engine stopped and started at a mean interval no allocation reaches (2^40 bytes), in turn, round
 * after round. Prints {@code PAIR_NS_OFF}, {@code PAIR_NS_ON} (medians over the rounds), {@code
 * PAIR_NS_ADDED} (the median of each round's difference) and {@code SAMPLES} (the engine's samples,
 * 0 when no pair was sampled).
 *
 * <p>{@code java -cp nativemem.jar:classes UnsampledPairCost <library> <rounds> <pairs per round>
 * <bytes>}
 */
public final class UnsampledPairCost {
  private static native long pairs(long n, long size);

  public static void main(String[] args) {
    System.load(args[0]);
    int rounds = Integer.parseInt(args[1]);
    long n = Long.parseLong(args[2]);
    long size = Long.parseLong(args[3]);
    HeapProfiler profiler = NativeMemory.profiling();
    profiler.resetWithSampleInterval(1L << 40);
    ThreadMXBean threads = ManagementFactory.getThreadMXBean();
    pairs(n, size); // warm-up: the arena's free lists, the page tables
    double[] off = new double[rounds];
    double[] on = new double[rounds];
    double[] added = new double[rounds];
    for (int r = 0; r < rounds; r++) {
      profiler.stop();
      long t0 = threads.getCurrentThreadCpuTime();
      pairs(n, size);
      off[r] = (threads.getCurrentThreadCpuTime() - t0) / (double) n;
      profiler.start();
      t0 = threads.getCurrentThreadCpuTime();
      pairs(n, size);
      on[r] = (threads.getCurrentThreadCpuTime() - t0) / (double) n;
      added[r] = on[r] - off[r];
    }
    System.out.println("PROFILER " + profiler);
    profiler.stop();
    System.out.printf("PAIR_NS_OFF %.2f%n", median(off));
    System.out.printf("PAIR_NS_ON %.2f%n", median(on));
    System.out.printf("PAIR_NS_ADDED %.2f%n", median(added));
  }

  private static double median(double[] values) {
    double[] sorted = values.clone();
    Arrays.sort(sorted);
    return sorted[sorted.length / 2];
  }
}
