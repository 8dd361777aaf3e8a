import dev.nativemem.NativeMemory;
import dev.nativemem.watch.MemoryWatch;
import dev.nativemem.watch.WatchOptions;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Locale;

/**
 * The memory watch's cost per sample (not a test): runs the watch at a 10 ms interval for the
 * seconds given and reads its sampling thread's CPU time and allocated bytes from the JVM
 * (ThreadMXBean), so the figure is the sampler's own, not the process's noise. The share of one
 * CPU at the default 1 s interval is CPU per sample / 1 s.
 *
 * <p>java -cp nativemem.jar bench/WatchCost.java [seconds, default 20]
 */
public final class WatchCost {
  public static void main(String[] args) throws Exception {
    int seconds = Math.min(500, args.length > 0 ? Integer.parseInt(args[0]) : 20);
    Path dir = Files.createTempDirectory("watch-cost");
    NativeMemory.allocator(); // the library loaded before the watch's first sample
    MemoryWatch watch =
        MemoryWatch.start(
            WatchOptions.defaults()
                .withDirectory(dir)
                .withInterval(Duration.ofMillis(10))
                .withHistory(Duration.ofMinutes(10))
                .withThresholdsPercent()
                .withGrowth(Duration.ZERO, Duration.ofMinutes(1))
                .withLeakedJump(0));
    Thread.sleep(2000); // warm: JIT, first reads
    com.sun.management.ThreadMXBean threads =
        (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
    long id = -1;
    for (Thread t : Thread.getAllStackTraces().keySet()) {
      if (t.getName().equals("nativemem-watch")) {
        id = t.getId();
      }
    }
    long cpu0 = threads.getThreadCpuTime(id);
    long alloc0 = threads.getThreadAllocatedBytes(id);
    long samples0 = watch.samples();
    Thread.sleep(seconds * 1000L);
    long cpu = threads.getThreadCpuTime(id) - cpu0;
    long alloc = threads.getThreadAllocatedBytes(id) - alloc0;
    long n = watch.samples() - samples0; // the ring (10 min) does not wrap in this run
    watch.close();
    System.out.printf(
        Locale.ROOT,
        "allocator %s, agent %s: %d samples, %.1f us CPU and %.1f bytes allocated per sample;"
            + " at the default 1 s interval: %.4f%% of one CPU%n",
        NativeMemory.allocator().kind(),
        dev.nativemem.handles.NativeHandles.agentActive(),
        n,
        cpu / 1000.0 / n,
        (double) alloc / n,
        cpu / (double) n / 1e9 * 100);
  }
}
