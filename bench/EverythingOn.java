import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import javax.management.MBeanAttributeInfo;
import javax.management.MBeanServer;
import javax.management.ObjectName;

/**
 * The allocator benchmark's workload with a metrics scraper beside it (bench/everything-on.sh; not
 * a test): with {@code -Dbench.scrapeSeconds=N}, a daemon thread reads every attribute of every
 * {@code dev.nativemem} MBean through the platform MBean server every N seconds, as the Prometheus
 * JMX exporter does on each scrape. Then {@code AllocatorWorkload <threads> <seconds>} runs and
 * prints its figures; this prints {@code SCRAPES} (scrapes done, attributes read by the last),
 * {@code SCRAPE_CPU_NS} (the scraper thread's CPU time), and {@code OWN_THREADS_CPU_SHARE}: the CPU
 * time of nativemem's own threads ({@code nativemem-*}: the watch's sampler and capture, the
 * export's dump and sender) and of the scraper, over the whole run, as a fraction of the process's
 * CPU time (user + sys of every thread) in the same run.
 */
public final class EverythingOn {
  public static void main(String[] args) throws Exception {
    long every = Long.getLong("bench.scrapeSeconds", 0);
    AtomicLong scrapes = new AtomicLong();
    AtomicLong attributes = new AtomicLong();
    Thread scraper = null;
    if (every > 0) {
      scraper =
          new Thread(
              () -> {
                MBeanServer server = ManagementFactory.getPlatformMBeanServer();
                while (true) {
                  try {
                    attributes.set(scrapeOnce(server));
                    scrapes.incrementAndGet();
                    Thread.sleep(every * 1000);
                  } catch (InterruptedException e) {
                    return;
                  } catch (Exception e) {
                    throw new IllegalStateException("scrape failed", e);
                  }
                }
              },
              "bench-scraper");
      scraper.setDaemon(true);
      scraper.start();
    }
    AllocatorWorkload.main(args);
    java.lang.management.ThreadMXBean threads = ManagementFactory.getThreadMXBean();
    if (scraper != null) {
      System.out.println("SCRAPES " + scrapes.get() + " " + attributes.get());
      System.out.println("SCRAPE_CPU_NS " + threads.getThreadCpuTime(scraper.getId()));
    }
    long own = 0;
    for (Thread t : Thread.getAllStackTraces().keySet()) {
      if (t.getName().startsWith("nativemem") || t == scraper) {
        own += Math.max(0, threads.getThreadCpuTime(t.getId()));
      }
    }
    long process =
        ((com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean())
            .getProcessCpuTime();
    System.out.printf("OWN_THREADS_CPU_SHARE %.5f%n", (double) own / process);
  }

  /** Reads every readable attribute of every nativemem MBean; returns how many were read. */
  private static int scrapeOnce(MBeanServer server) throws Exception {
    int read = 0;
    for (ObjectName name : server.queryNames(new ObjectName("dev.nativemem:*"), null)) {
      List<String> names = new ArrayList<>();
      for (MBeanAttributeInfo a : server.getMBeanInfo(name).getAttributes()) {
        if (a.isReadable()) {
          names.add(a.getName());
        }
      }
      read += server.getAttributes(name, names.toArray(new String[0])).size();
    }
    return read;
  }
}
