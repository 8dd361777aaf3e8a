import dev.nativemem.watch.MemoryWatch;
import dev.nativemem.watch.WatchOptions;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * Benchmark (not a test): the anonymous resident memory an incident capture with a heap profile
 * leaves behind on glibc, capture by capture, 2 s after each. The watch profiles by import
 * rewriting, 200 MiB of direct buffers are live; the capture runs on the watch's own thread, as a
 * limit trigger's does. Run it with two jars side by side:
 *
 * <p>usage: java -XX:MaxDirectMemorySize=1g -cp JAR bench/CaptureMemoryCost.java [CAPTURES]
 */
public final class CaptureMemoryCost {
  public static void main(String[] args) throws Exception {
    int captures = args.length > 0 ? Integer.parseInt(args[0]) : 3;
    Path dir = Files.createTempDirectory("capture-cost");
    List<ByteBuffer> live = new ArrayList<>();
    try (MemoryWatch watch = MemoryWatch.start(WatchOptions.defaults().withDirectory(dir))) {
      for (int i = 0; i < 200; i++) {
        live.add(ByteBuffer.allocateDirect(1 << 20));
      }
      Thread.sleep(1500);
      long first = rssAnonKib();
      for (int i = 0; i < captures; i++) {
        long before = rssAnonKib();
        long started = System.nanoTime();
        watch.capture("capture cost " + i);
        long millis = (System.nanoTime() - started) / 1_000_000;
        Thread.sleep(2000);
        System.out.printf(
            "capture %d: %d ms, RssAnon %+.1f MiB 2 s after%n",
            i, millis, (rssAnonKib() - before) / 1024.0);
      }
      System.out.printf(
          "%d captures: RssAnon %+.1f MiB in all (%d MiB live in direct buffers)%n",
          captures, (rssAnonKib() - first) / 1024.0, live.size());
    }
  }

  private static long rssAnonKib() throws Exception {
    for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
      if (line.startsWith("RssAnon:")) {
        return Long.parseLong(line.replaceAll("\\D", ""));
      }
    }
    throw new IllegalStateException("no RssAnon in /proc/self/status");
  }
}
