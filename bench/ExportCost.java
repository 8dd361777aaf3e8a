import com.sun.net.httpserver.HttpServer;
import dev.nativemem.NativeMemory;
import dev.nativemem.export.ProfileExporter;
import java.lang.management.ManagementFactory;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Properties;
import java.util.concurrent.atomic.AtomicLong;
import java.util.zip.Inflater;

/**
 * The continuous export's cost (not a test): a JVM holding 2000 live Inflaters and churning small
 * native allocations, sampled every 512 KiB with Java frames, exports every {@code interval}
 * seconds to a local stub endpoint (OTLP or Pyroscope). Reads the CPU time of the export's own
 * threads (dump, analysis, HTTP) from the JVM (ThreadMXBean) and the bytes each request carried;
 * the share of one CPU at the default 60 s interval is CPU per export / 60 s. Run under jemalloc
 * (LD_PRELOAD), see export-cost.sh.
 *
 * <p>java -cp nativemem.jar bench/ExportCost.java [otlp|pyroscope] [exports, default 10] [interval
 * seconds, default 2]
 */
public final class ExportCost {
  public static void main(String[] args) throws Exception {
    String protocol = args.length > 0 ? args[0] : "otlp";
    int exports = args.length > 1 ? Integer.parseInt(args[1]) : 10;
    int interval = args.length > 2 ? Integer.parseInt(args[2]) : 2;
    AtomicLong received = new AtomicLong();
    AtomicLong bodies = new AtomicLong();
    HttpServer server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
    server.createContext(
        "/",
        exchange -> {
          received.addAndGet(exchange.getRequestBody().readAllBytes().length);
          bodies.incrementAndGet();
          exchange.sendResponseHeaders(200, -1);
          exchange.close();
        });
    server.start();
    List<Inflater> live = new ArrayList<>();
    NativeMemory.profiling().sampleInterval(512 * 1024);
    for (int i = 0; i < 2000; i++) {
      live.add(new Inflater());
    }
    Properties settings = new Properties();
    settings.setProperty("nativemem.export", protocol);
    settings.setProperty(
        "nativemem.export.endpoint", "http://127.0.0.1:" + server.getAddress().getPort());
    settings.setProperty("nativemem.export.interval", interval + "s");
    ProfileExporter.startIfOn(settings);
    Thread churn =
        new Thread(
            () -> {
              while (true) {
                new Inflater().end();
              }
            });
    churn.setDaemon(true);
    churn.start();
    while (ProfileExporter.sent() < 1) {
      Thread.sleep(50); // the first export warms the JIT and the symbol tables
    }
    com.sun.management.ThreadMXBean threads =
        (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
    long cpu0 = exportCpu(threads);
    long sent0 = ProfileExporter.sent();
    long bytes0 = ProfileExporter.sentBytes();
    while (ProfileExporter.sent() < sent0 + exports) {
      Thread.sleep(50);
    }
    long cpu = exportCpu(threads) - cpu0;
    long n = ProfileExporter.sent() - sent0;
    long bytes = ProfileExporter.sentBytes() - bytes0;
    System.out.printf(
        Locale.ROOT,
        "%s, %d live Inflaters, 512 KiB sampling: %d exports, %.1f ms CPU and %.1f KiB per export;"
            + " at the default 60 s interval: %.4f%% of one CPU; dropped %d%n",
        protocol,
        live.size(),
        n,
        cpu / 1e6 / n,
        bytes / 1024.0 / n,
        cpu / (double) n / 60e9 * 100,
        ProfileExporter.dropped());
    server.stop(0);
    System.exit(0);
  }

  /** CPU time of the export's threads: the dump and analysis, the sender, the HTTP client's. */
  private static long exportCpu(com.sun.management.ThreadMXBean threads) {
    long total = 0;
    for (Thread t : Thread.getAllStackTraces().keySet()) {
      if (t.getName().startsWith("nativemem-export")) {
        total += Math.max(0, threads.getThreadCpuTime(t.getId()));
      }
    }
    return total;
  }
}
