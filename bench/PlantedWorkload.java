import java.lang.reflect.Field;
import java.nio.ByteBuffer;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;

/**
 * Native memory of known size, count and line, planted before the allocator benchmark's workload
 * runs (bench/profiler-findings.sh; not a test). Three sites, each in its own method, so that a
 * profiler's Java frames can name it:
 *
 * <ul>
 *   <li>{@code plantLarge}: 64 direct buffers of 1 MiB, kept: 64 MiB live;
 *   <li>{@code plantSmall}: 100,000 direct buffers of 512 bytes, kept: 48.8 MiB live;
 *   <li>{@code churn}: 6,400 blocks of 64 KiB (400 MiB), each freed at once: nothing live.
 * </ul>
 *
 * <p>Then {@code AllocatorWorkload <threads> <seconds>} runs (its RocksDB + zlib churn, its
 * figures: ops per CPU-second, peak RSS). With {@code -Dbench.profile=BYTES} nativemem's profiling
 * is started through the API at that mean interval before anything is planted (on glibc: the
 * import-rewriting engine), and its status ({@code PROFILER ...}: the engine's live samples and
 * the memory of its tables) is printed at the end. With {@code -Dbench.dump=PATH} a nativemem heap profile
 * is written there at the end, while the planted memory is still held, and its analysis per planted
 * method ({@code NATIVEMEM_SITE <frame> <bytes> <objects>}, estimates). Prints {@code PLANTED
 * <site> <bytes> <count>}: the truth each profiler's report is compared with.
 */
public final class PlantedWorkload {
  static final int LARGE_COUNT = 64;
  static final int LARGE_SIZE = 1 << 20;
  static final int SMALL_COUNT = 100_000;
  static final int SMALL_SIZE = 512;
  static final int CHURN_COUNT = 6_400;
  static final int CHURN_SIZE = 64 << 10;

  private static final List<ByteBuffer> KEPT = new ArrayList<>();

  public static void main(String[] args) throws Exception {
    if (Boolean.getBoolean("bench.javaFrames")) {
      dev.nativemem.NativeMemory.profiling().javaFrames(true);
    }
    long interval = Long.getLong("bench.profile", 0);
    if (interval > 0) {
      dev.nativemem.NativeMemory.profiling().resetWithSampleInterval(interval);
      dev.nativemem.NativeMemory.profiling().start();
    }
    plantLarge();
    plantSmall();
    churn();
    System.out.println("PLANTED plantLarge " + (long) LARGE_COUNT * LARGE_SIZE + " " + LARGE_COUNT);
    System.out.println("PLANTED plantSmall " + (long) SMALL_COUNT * SMALL_SIZE + " " + SMALL_COUNT);
    System.out.println("PLANTED churn 0 0");
    AllocatorWorkload.main(args);
    String dump = System.getProperty("bench.dump");
    if (dump != null) {
      // nativemem's own estimate per planted method: bytes and objects (cumulative sites)
      dev.nativemem.profile.ProfileReport report =
          dev.nativemem.NativeMemory.dumpProfile(Paths.get(dump)).analyze(1000);
      for (dev.nativemem.profile.ProfileReport.Site site : report.topCumulative()) {
        if (site.name().startsWith("PlantedWorkload.")) {
          System.out.println(
              "NATIVEMEM_SITE "
                  + site.name().replace(' ', '_')
                  + " "
                  + site.cumulativeBytes()
                  + " "
                  + site.cumulativeObjects());
        }
      }
    }
    if (interval > 0) {
      System.out.println("PROFILER " + dev.nativemem.NativeMemory.profiling());
    }
    System.out.println("KEPT_BUFFERS " + KEPT.size()); // reachable to the end: all of it live
  }

  private static void plantLarge() {
    for (int i = 0; i < LARGE_COUNT; i++) {
      KEPT.add(ByteBuffer.allocateDirect(LARGE_SIZE));
    }
  }

  private static void plantSmall() {
    for (int i = 0; i < SMALL_COUNT; i++) {
      KEPT.add(ByteBuffer.allocateDirect(SMALL_SIZE));
    }
  }

  private static void churn() throws ReflectiveOperationException {
    Field f = Class.forName("sun.misc.Unsafe").getDeclaredField("theUnsafe");
    f.setAccessible(true);
    sun.misc.Unsafe unsafe = (sun.misc.Unsafe) f.get(null);
    for (int i = 0; i < CHURN_COUNT; i++) {
      long address = unsafe.allocateMemory(CHURN_SIZE);
      unsafe.putByte(address, (byte) i);
      unsafe.freeMemory(address);
    }
  }
}
