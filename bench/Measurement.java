import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.LongAdder;

/** What the bench/ workloads measure the same way: throughput over a window, and peak RSS. */
final class Measurement {
  private Measurement() {}

  /**
   * Counts the operations of {@code seconds} (workers add to {@code ops} while {@code measuring})
   * and prints {@code OPS} per second and {@code OPS_PER_CPU_SECOND} of the whole process, which
   * is steadier than wall-clock throughput on a shared machine.
   */
  static void throughput(AtomicBoolean measuring, LongAdder ops, int seconds)
      throws InterruptedException {
    com.sun.management.OperatingSystemMXBean os =
        (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
    measuring.set(true);
    long start = System.nanoTime();
    long cpuStart = os.getProcessCpuTime();
    Thread.sleep(seconds * 1000L);
    long done = ops.sum();
    double cpu = (os.getProcessCpuTime() - cpuStart) / 1e9;
    double elapsed = (System.nanoTime() - start) / 1e9;
    measuring.set(false);
    System.out.printf("OPS %.0f%n", done / elapsed);
    System.out.printf("OPS_PER_CPU_SECOND %.0f%n", done / cpu);
  }

  /** The kernel's peak resident set of this process ({@code VmHWM}), in bytes. */
  static long peakRssBytes() throws java.io.IOException {
    for (String line : Files.readAllLines(Paths.get("/proc/self/status"))) {
      if (line.startsWith("VmHWM:")) {
        return Long.parseLong(line.replaceAll("[^0-9]", "")) * 1024;
      }
    }
    return -1;
  }
}
