package dev.nativemem.apps.prometheus;

import dev.nativemem.micrometer.NativeMemoryMeterBinder;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.zip.Inflater;
import javax.management.MBeanServer;
import javax.management.ObjectName;
import javax.management.openmbean.CompositeData;
import javax.management.openmbean.TabularData;

/**
 * An application that never calls nativemem: started with the agent, {@code -Dnativemem.jmx=true}
 * and the JMX exporter. It holds {@link #OPEN_INFLATERS} Inflaters open and drops {@link
 * #DROPPED_INFLATERS} without {@code end()} (left to the JDK's cleaner: leaked handles), prints
 * {@code ready} once the MXBean counts them, and for each {@code read} on its input prints the
 * MXBean's {@code Series} as a JMX client reads it, one {@code key value} per line, then {@code
 * end}; for {@code micrometer}, the scrape of a PrometheusMeterRegistry bound to nativemem's
 * binder, then {@code end}.
 */
public final class MxBeanProbe {
  static final int OPEN_INFLATERS = 7;
  static final int DROPPED_INFLATERS = 3;
  static final String LEAKED = "nativemem_handles_leaked_total;kind=Inflater;known=none";

  private MxBeanProbe() {}

  public static void main(String[] args) throws Exception {
    List<Inflater> open = new ArrayList<>();
    for (int i = 0; i < OPEN_INFLATERS; i++) {
      open.add(new Inflater());
    }
    for (int i = 0; i < DROPPED_INFLATERS; i++) {
      new Inflater().setInput(new byte[1]);
    }
    MBeanServer server = ManagementFactory.getPlatformMBeanServer();
    ObjectName name = new ObjectName("dev.nativemem:type=NativeMemory");
    for (int i = 0;
        i < 100 && series(server, name).getOrDefault(LEAKED, 0.0) < DROPPED_INFLATERS;
        i++) {
      System.gc();
      Thread.sleep(100);
    }
    System.out.println("ready");
    BufferedReader in =
        new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    for (String line; (line = in.readLine()) != null; ) {
      if (line.equals("read")) {
        series(server, name).forEach((key, value) -> System.out.println(key + " " + value));
      } else if (line.equals("micrometer")) {
        // Only now does the application use nativemem itself (the Spring Boot way).
        PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
        new NativeMemoryMeterBinder().bindTo(registry);
        System.out.print(registry.scrape());
      }
      System.out.println("end");
    }
    open.forEach(Inflater::end);
  }

  private static Map<String, Double> series(MBeanServer server, ObjectName name) throws Exception {
    Map<String, Double> series = new TreeMap<>();
    for (Object row : ((TabularData) server.getAttribute(name, "Series")).values()) {
      CompositeData entry = (CompositeData) row;
      series.put((String) entry.get("key"), (Double) entry.get("value"));
    }
    return series;
  }
}
