import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.LongAdder;
import java.util.stream.Stream;
import org.rocksdb.BlockBasedTableConfig;
import org.rocksdb.LRUCache;
import org.rocksdb.Options;
import org.rocksdb.RocksDB;

/**
 * The allocator benchmark's workload: RocksDB puts and gets plus zlib stream churn on N threads.
 * Prints operations per second, operations per CPU-second of the whole process (steadier than
 * wall-clock throughput on a shared machine) and the peak RSS the kernel reports (VmHWM).
 *
 * <p>Compiled with bench/Measurement.java; {@code AllocatorWorkload <threads> <seconds>}.
 */
public final class AllocatorWorkload {
  private static final int KEYS = 200_000;

  public static void main(String[] args) throws Exception {
    int threads = Integer.parseInt(args[0]);
    int seconds = Integer.parseInt(args[1]);
    if (Boolean.getBoolean("bench.javaFrames")) {
      dev.nativemem.NativeMemory.profiling().javaFrames(true);
    }
    RocksDB.loadLibrary();
    Path dir = Files.createTempDirectory("nativemem-bench");
    try (LRUCache cache = new LRUCache(32L << 20);
        Options options =
            new Options()
                .setCreateIfMissing(true)
                .setWriteBufferSize(16L << 20)
                .setTableFormatConfig(new BlockBasedTableConfig().setBlockCache(cache));
        RocksDB db = RocksDB.open(options, dir.toString())) {
      byte[] value = new byte[200];
      for (int i = 0; i < KEYS; i += 4) {
        db.put(key(i), value);
      }
      AtomicBoolean measuring = new AtomicBoolean(false);
      AtomicBoolean running = new AtomicBoolean(true);
      LongAdder ops = new LongAdder();
      Thread[] workers = new Thread[threads];
      for (int t = 0; t < threads; t++) {
        workers[t] = new Thread(() -> work(db, running, measuring, ops));
        workers[t].start();
      }
      // warm-up: JIT, caches, arenas (export-workload-cost.sh: past the first export, both sides)
      Thread.sleep(Long.getLong("bench.warmupMillis", 2000));
      if (Boolean.getBoolean("bench.export")) {
        System.out.println("EXPORTS_AT_START " + dev.nativemem.export.ProfileExporter.sent());
        System.out.println("EXPORT_THREADS_CPU_NS_AT_START " + exportThreadsCpu());
        System.out.println("PROCESS_CPU_NS_AT_START " + processCpu());
      }
      Measurement.throughput(measuring, ops, seconds);
      running.set(false);
      for (Thread w : workers) {
        w.join();
      }
      System.out.println("PEAK_RSS " + Measurement.peakRssBytes());
      if (Boolean.getBoolean("bench.export")) {
        // What the agent's export sent while the workload ran (export-workload-cost.sh).
        System.out.println("EXPORTS " + dev.nativemem.export.ProfileExporter.sent());
        System.out.println("EXPORT_BYTES " + dev.nativemem.export.ProfileExporter.sentBytes());
        System.out.println("EXPORT_DROPPED " + dev.nativemem.export.ProfileExporter.dropped());
        System.out.println("EXPORT_THREADS_CPU_NS " + exportThreadsCpu());
        System.out.println("PROCESS_CPU_NS " + processCpu());
      }
      if (Boolean.getBoolean("bench.javaFrames")) {
        // The hook's own counters: samples taken, and those with Java frames.
        System.out.println(
            "JAVA_FRAMES " + dev.nativemem.internal.NativeBridge.call("java_frames_status"));
      }
    } finally {
      try (Stream<Path> walk = Files.walk(dir)) {
        walk.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
      }
    }
  }

  /** CPU time of the export's threads (dump and analysis, sender) since they started. */
  private static long exportThreadsCpu() {
    com.sun.management.ThreadMXBean mx =
        (com.sun.management.ThreadMXBean) java.lang.management.ManagementFactory.getThreadMXBean();
    long total = 0;
    for (Thread t : Thread.getAllStackTraces().keySet()) {
      if (t.getName().startsWith("nativemem-export")) {
        total += Math.max(0, mx.getThreadCpuTime(t.getId()));
      }
    }
    return total;
  }

  /** CPU time of the whole process (user + sys of every thread). */
  private static long processCpu() {
    return ((com.sun.management.OperatingSystemMXBean)
            java.lang.management.ManagementFactory.getOperatingSystemMXBean())
        .getProcessCpuTime();
  }

  private static byte[] key(int i) {
    return ("key" + i).getBytes(StandardCharsets.UTF_8);
  }

  /** One op: a put, a get, and every 8th op a deflate/inflate of 16 KiB with fresh streams. */
  private static void work(
      RocksDB db, AtomicBoolean running, AtomicBoolean measuring, LongAdder ops) {
    ThreadLocalRandom random = ThreadLocalRandom.current();
    byte[] value = new byte[200];
    byte[] plain = new byte[16 * 1024];
    for (int i = 0; i < plain.length; i++) {
      plain[i] = (byte) (i % 251 < 200 ? i % 13 : random.nextInt());
    }
    byte[] packed = new byte[32 * 1024];
    byte[] unpacked = new byte[16 * 1024];
    long n = 0;
    try {
      while (running.get()) {
        db.put(key(random.nextInt(KEYS)), value);
        db.get(key(random.nextInt(KEYS)));
        if ((++n & 7) == 0) {
          ZlibRoundTrip.run(plain, packed, unpacked);
        }
        if (measuring.get()) {
          ops.increment();
        }
      }
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }
}
