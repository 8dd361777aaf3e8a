import dev.nativemem.watch.MemoryWatch;
import dev.nativemem.watch.WatchOptions;
import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Random;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * How late the watch's capture starts under a full-GC storm (not a test). In a memory cgroup of
 * the limit given (bench/watch-gc-storm.sh makes one), with the heap three-quarters full of live data (more and the source launcher's own compile runs out) and
 * threads churning it ("storm"), or idle ("calm"): native memory is raised to 80% of the limit,
 * then, at T0, past 85%; the figure is the bundle's captured_at minus T0 (it includes waiting for
 * the next sample: 0 to 1 s at the default interval), and the largest gap between two samples of
 * its timeline during the storm.
 *
 * <p>java -Xmx256m -XX:+UseParallelGC -XX:MaxDirectMemorySize=2g -cp nativemem.jar
 * bench/WatchGcStorm.java LIMIT_BYTES storm|calm
 */
public final class WatchGcStorm {
  static volatile boolean churn = true;
  static final List<ByteBuffer> NATIVE = new ArrayList<>();

  public static void main(String[] args) throws Exception {
    long limit = Long.parseLong(args[0]);
    boolean storm = args[1].equals("storm");
    Path dir = Files.createTempDirectory("watch-gc-storm");
    MemoryWatch watch =
        MemoryWatch.start(
            WatchOptions.defaults()
                .withDirectory(dir)
                .withGrowth(Duration.ZERO, Duration.ofMinutes(1))
                .withLeakedJump(0)
                .withProfile(false));
    List<Thread> churners = new ArrayList<>();
    if (storm) {
      Object[] live = fillHeap(0.75);
      for (int i = 0; i < 2; i++) {
        Thread t = new Thread(() -> churn(live), "churn-" + i);
        t.setDaemon(true);
        t.start();
        churners.add(t);
      }
    }
    raiseTo(0.80, limit);
    Thread.sleep(5000); // the storm settles in; the watch samples below the threshold
    long gcCount0 = fullGcCount();
    long gcTime0 = fullGcTime();
    long t0Wait = System.nanoTime();
    raiseTo(0.87, limit);
    Instant t0 = Instant.now();
    while (watch.lastBundle() == null && System.nanoTime() - t0Wait < 30_000_000_000L) {
      Thread.sleep(5);
    }
    long gcs = fullGcCount() - gcCount0;
    long gcMs = fullGcTime() - gcTime0;
    double waited = (System.nanoTime() - t0Wait) / 1e9;
    churn = false;
    Path bundle = watch.lastBundle();
    if (bundle == null) {
      System.out.println("no bundle within 30 s");
      System.exit(1);
    }
    String manifest = Files.readString(bundle.resolve("manifest.json"));
    Instant captured = Instant.parse(field(manifest, "\"captured_at\":\"([^\"]+)\""));
    long captureMs = Long.parseLong(field(manifest, "\"capture_ms\":(\\d+)"));
    String timeline = Files.readString(bundle.resolve("timeline.json"));
    Matcher t = Pattern.compile("\\{\"t\":(\\d+)").matcher(timeline);
    long previous = -1;
    long maxGap = 0;
    List<String> late = new ArrayList<>();
    while (t.find()) {
      long now = Long.parseLong(t.group(1));
      if (previous > 0) {
        maxGap = Math.max(maxGap, now - previous);
        if (now - previous > 1100) {
          late.add((now - t0.toEpochMilli()) + ":" + (now - previous));
        }
      }
      previous = now;
    }
    System.out.println("gaps over 1.1 s (ms from T0:gap) " + late);
    System.out.printf(
        Locale.ROOT,
        "%s: capture started %d ms after usage crossed 85%% (includes the wait for the next"
            + " 1 s sample), took %d ms; largest gap between samples %d ms; %d full GCs (%d ms)"
            + " in the %.1f s until the bundle was there%n",
        storm ? "full-GC storm" : "calm",
        Duration.between(t0, captured).toMillis(),
        captureMs,
        maxGap,
        gcs,
        gcMs,
        waited);
    watch.close();
    System.exit(0);
  }

  private static String field(String json, String regex) {
    Matcher m = Pattern.compile(regex).matcher(json);
    if (!m.find()) {
      throw new IllegalStateException(regex + " not in " + json);
    }
    return m.group(1);
  }

  /** 1 MiB arrays up to {@code share} of the maximum heap, kept live. */
  private static Object[] fillHeap(double share) {
    int count = (int) (Runtime.getRuntime().maxMemory() * share / (1 << 20));
    Object[] live = new Object[count];
    for (int i = 0; i < count; i++) {
      live[i] = new byte[1 << 20];
    }
    return live;
  }

  /** Replaces live arrays with new ones: the old generation fills with garbage again and again. */
  private static void churn(Object[] live) {
    Random random = new Random();
    while (churn) {
      live[random.nextInt(live.length)] = new byte[1 << 20];
      for (int i = 0; i < 1000; i++) {
        live[random.nextInt(live.length)].hashCode();
      }
    }
  }

  /** Direct buffers (zeroed, so resident) until the cgroup's usage is {@code share} of limit. */
  private static void raiseTo(double share, long limit) throws Exception {
    long need = (long) (limit * share) - usage();
    while (need > 0) {
      int chunk = (int) Math.min(need, 64 << 20);
      NATIVE.add(ByteBuffer.allocateDirect(chunk));
      need -= chunk;
    }
  }

  private static long usage() throws Exception {
    for (String line : Files.readAllLines(Paths.get("/proc/self/cgroup"))) {
      String[] parts = line.split(":", 3);
      if (parts[1].equals("memory")) {
        return Long.parseLong(
            Files.readString(
                    Paths.get("/sys/fs/cgroup/memory" + parts[2], "memory.usage_in_bytes"))
                .trim());
      }
    }
    throw new IllegalStateException("not in a v1 memory cgroup");
  }

  private static long fullGcCount() {
    long n = 0;
    for (GarbageCollectorMXBean gc : ManagementFactory.getGarbageCollectorMXBeans()) {
      if (gc.getName().contains("MarkSweep") || gc.getName().contains("Old")) {
        n += gc.getCollectionCount();
      }
    }
    return n;
  }

  private static long fullGcTime() {
    long n = 0;
    for (GarbageCollectorMXBean gc : ManagementFactory.getGarbageCollectorMXBeans()) {
      if (gc.getName().contains("MarkSweep") || gc.getName().contains("Old")) {
        n += gc.getCollectionTime();
      }
    }
    return n;
  }
}
