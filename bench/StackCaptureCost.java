import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.zip.Inflater;

/**
 * Benchmark (not a test): thread CPU nanoseconds per create+end of one {@code Inflater}, the best of
 * four rounds of {@code n} after two warm-up rounds. CPU time rather than wall time, so that other
 * work on a shared host shows less. Run it with and without an agent:
 *
 * <pre>java [-javaagent:nativemem.jar=level=full] bench/StackCaptureCost.java [n=50000]</pre>
 */
public class StackCaptureCost {
  public static void main(String[] args) {
    ThreadMXBean threads = ManagementFactory.getThreadMXBean();
    int n = args.length > 0 ? Integer.parseInt(args[0]) : 50_000;
    long best = Long.MAX_VALUE;
    int sum = 0;
    for (int round = 0; round < 6; round++) {
      long start = threads.getCurrentThreadCpuTime();
      for (int i = 0; i < n; i++) {
        Inflater inflater = new Inflater();
        sum += inflater.getRemaining();
        inflater.end();
      }
      long perCreation = (threads.getCurrentThreadCpuTime() - start) / n;
      if (round >= 2) {
        best = Math.min(best, perCreation);
      }
    }
    System.out.println(best + (sum == 42 ? " " : ""));
  }
}
