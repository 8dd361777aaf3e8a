package dev.nativemem.apps.actuator;

import dev.nativemem.NativeMemory;
import dev.nativemem.handles.HandleReport;
import dev.nativemem.handles.NativeHandles;
import java.io.IOException;
import java.io.InputStream;
import java.lang.management.ManagementFactory;
import java.lang.ref.WeakReference;
import java.util.ArrayList;
import java.util.List;
import java.util.zip.Inflater;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.web.context.WebServerInitializedEvent;
import org.springframework.context.event.EventListener;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;

/**
 * A web application with Actuator and the Prometheus registry; nativemem-micrometer on its class
 * path is all it does for metrics. For the test it prints its port, plants native handles, and
 * serves what nativemem's API says ({@code /truth}) to compare the scrape with.
 */
@SpringBootApplication
@RestController
public class MetricsApp {
  private static final String RESOURCE = "/payload.txt";
  private static final long COLLECT_MILLIS = 20_000;

  /** Open Inflaters the test planted, reachable until the JVM exits. */
  private static final List<Inflater> OPEN = new ArrayList<>();

  public static void main(String[] args) {
    SpringApplication.run(MetricsApp.class, args);
  }

  @EventListener
  public void printPort(WebServerInitializedEvent event) {
    System.out.println("port " + event.getWebServer().getPort());
    System.out.flush();
  }

  /** Creates {@code count} Inflaters and keeps them open. */
  @GetMapping("/plant/open-inflaters")
  public synchronized String openInflaters(@RequestParam("count") int count) {
    for (int i = 0; i < count; i++) {
      OPEN.add(new Inflater());
    }
    return "open_planted " + OPEN.size() + "\n";
  }

  /**
   * Reads the jar's resource {@code count} times without closing the streams, drops them and waits
   * until they are collected: leaked Inflaters of a catalogued site (unclosed getResourceAsStream).
   */
  @GetMapping("/plant/dropped-streams")
  public String droppedStreams(@RequestParam("count") int count) throws Exception {
    List<WeakReference<InputStream>> dropped = new ArrayList<>();
    for (int i = 0; i < count; i++) {
      dropped.add(new WeakReference<>(openAndRead()));
    }
    long deadline = System.currentTimeMillis() + COLLECT_MILLIS;
    long collected = 0;
    while (System.currentTimeMillis() < deadline) {
      System.gc();
      collected = dropped.stream().filter(r -> r.get() == null).count();
      if (collected == count) {
        break;
      }
      Thread.sleep(50);
    }
    return "streams_collected " + collected + "\n";
  }

  private static InputStream openAndRead() throws IOException {
    InputStream in = MetricsApp.class.getResourceAsStream(RESOURCE);
    if (in == null || in.read(new byte[256]) <= 0) {
      throw new IllegalStateException(RESOURCE + " missing or empty");
    }
    return in;
  }

  /** What nativemem's API says now, read independently of the metric table. */
  @GetMapping("/truth")
  public String truth() {
    HandleReport handles = NativeHandles.report();
    long knownLeaked =
        handles.sites().stream()
            .filter(s -> s.kind().equals("Inflater"))
            .filter(s -> "unclosed-getResourceAsStream".equals(s.knownLeakId()))
            .mapToLong(HandleReport.Site::leaked)
            .sum();
    StringBuilder out = new StringBuilder();
    out.append("allocator ").append(NativeMemory.allocator().isJemalloc() ? "jemalloc" : "glibc");
    out.append("\nrss_bytes ").append(NativeMemory.processMemory().rssBytes());
    out.append("\nheap_committed_bytes ")
        .append(ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getCommitted());
    NativeMemory.breakdown()
        .limitBytes()
        .ifPresent(limit -> out.append("\nlimit_bytes ").append(limit));
    out.append("\nprofiling_ready ").append(NativeMemory.profiling().isAvailable() ? 1 : 0);
    out.append("\nagent_active ").append(handles.agentActive() ? 1 : 0);
    out.append("\ninflater_open ").append(handles.kind("Inflater").open());
    out.append("\ninflater_leaked ").append(handles.kind("Inflater").leaked());
    out.append("\ninflater_leaked_unclosed_resource ").append(knownLeaked);
    return out.append('\n').toString();
  }
}
