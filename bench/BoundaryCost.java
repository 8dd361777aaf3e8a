import dev.nativemem.NativeMemory;
import dev.nativemem.memory.MemorySnapshot;
import dev.nativemem.metrics.NativeMemoryMetrics;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;

/**
 * Benchmark (not a test): what a user's two most frequent crossings of the Java↔Rust boundary
 * cost through the public API alone, so that any jar can be measured: a cold metrics reading (a
 * scrape after the 200 ms sharing expired) and a heap-profile dump with its sidecar and pruning.
 * Prints the median and the fastest of each in µs; {@code bench/boundary.sh} runs two jars in turn
 * in one run and prints their ratio.
 *
 * <pre>java -cp nativemem.jar bench/BoundaryCost.java [rounds=30]</pre>
 */
public class BoundaryCost {
  public static void main(String[] args) throws Exception {
    int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 30;
    NativeMemory.version();
    NativeMemory.profiling().start();
    byte[][] live = new byte[64][];
    Path dir = Files.createTempDirectory("nativemem-boundary");
    long[] scrape = new long[rounds];
    long[] dump = new long[rounds];
    Object sink = null;
    for (int round = -3; round < rounds; round++) { // three rounds of warm-up
      for (int i = 0; i < live.length; i++) {
        live[i] = new byte[1 << 16]; // some heap churn between the steps, as an application has
      }
      Thread.sleep(MemorySnapshot.MAX_AGE.toMillis() + 5);
      long start = System.nanoTime();
      sink = NativeMemoryMetrics.read();
      long scraped = System.nanoTime() - start;
      Path target = dir.resolve("dump-" + (round + 3) + ".heap");
      start = System.nanoTime();
      sink = NativeMemory.dumpProfile(target);
      long dumped = System.nanoTime() - start;
      if (round >= 0) {
        scrape[round] = scraped;
        dump[round] = dumped;
      }
    }
    print("metrics reading, cold", scrape);
    print("heap-profile dump", dump);
    System.out.println(
        rounds + " rounds, " + NativeMemory.allocator().kind() + (sink == null ? "?" : ""));
  }

  private static void print(String step, long[] nanos) {
    long[] sorted = nanos.clone();
    Arrays.sort(sorted);
    System.out.printf(
        "%-24s median_us %10.0f fastest_us %10.0f%n",
        step, sorted[sorted.length / 2] / 1e3, sorted[0] / 1e3);
  }
}
