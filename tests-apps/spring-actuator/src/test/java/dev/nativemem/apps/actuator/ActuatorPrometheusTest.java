package dev.nativemem.apps.actuator;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.nativemem.apps.harness.AppJvm;
import dev.nativemem.apps.harness.AppRun;
import dev.nativemem.apps.harness.PrometheusText;
import dev.nativemem.apps.harness.PrometheusText.Sample;
import dev.nativemem.apps.harness.RunningApp;
import dev.nativemem.metrics.NativeMemoryMetric;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Predicate;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * A Spring Boot application with Actuator and the Prometheus registry, run as users run it: its
 * executable jar in a child JVM with the agent, on a random local port. The test scrapes {@code
 * /actuator/prometheus} over HTTP and compares the {@code nativemem_*} series with what nativemem's
 * API says in that process ({@code /truth}).
 */
class ActuatorPrometheusTest {
  private static final Path APP = Paths.get(System.getProperty("app.jar", "missing-app.jar"));
  private static final Duration START = Duration.ofSeconds(120);
  private static final HttpClient HTTP =
      HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();
  private static final long MAX_AGE_MILLIS = dev.nativemem.memory.MemorySnapshot.MAX_AGE.toMillis();
  private static final String UNCLOSED_STREAM = "unclosed-getResourceAsStream";

  private static RunningApp app;
  private static String base;

  @BeforeAll
  static void start() throws Exception {
    app = new AppJvm("actuator").start(APP, "--server.port=0", "--server.address=127.0.0.1");
    base = "http://127.0.0.1:" + app.awaitCounter("port", START);
  }

  @AfterAll
  static void stop() throws Exception {
    if (app != null) {
      AppRun run = app.stop();
      assertFalse(run.crashedIn(""), run.toString());
    }
  }

  @Test
  void everySeriesIsPublishedWithTheFiguresOfNativememsApi() throws Exception {
    Thread.sleep(MAX_AGE_MILLIS + 50); // a reading shared with an earlier scrape expires
    Map<String, String> truth = get(base, "/truth");
    List<Sample> scrape = scrape(base);
    Map<String, String> truthAfter = get(base, "/truth");
    String allocator = truth.get("allocator");
    boolean jemalloc = allocator.equals("jemalloc");
    String all = scrape.toString();

    Set<String> tableNames =
        Arrays.stream(NativeMemoryMetric.values())
            .map(NativeMemoryMetric::prometheusName)
            .collect(Collectors.toSet());
    for (Sample s : scrape) {
      if (s.name().startsWith("nativemem_")) {
        assertTrue(tableNames.contains(s.name()), s + " is a name of the table");
      }
    }
    for (String name :
        Arrays.asList(
            "nativemem_allocator_allocated_bytes",
            "nativemem_allocator_mapped_bytes",
            "nativemem_process_rss_bytes",
            "nativemem_process_rss_anon_bytes",
            "nativemem_process_rss_file_bytes",
            "nativemem_jvm_heap_committed_bytes",
            "nativemem_jvm_nonheap_committed_bytes",
            "nativemem_jvm_direct_buffers_bytes",
            "nativemem_unaccounted_bytes",
            "nativemem_handles_open",
            "nativemem_handles_leaked_total",
            "nativemem_cache_capacity_bytes",
            "nativemem_profiling_ready",
            "nativemem_profiling_active")) {
      assertTrue(scrape.stream().anyMatch(s -> s.name().equals(name)), name + " in " + all);
    }
    for (String jemallocOnly : Arrays.asList("active", "resident", "retained", "dirty")) {
      String name = "nativemem_allocator_" + jemallocOnly + "_bytes";
      assertEquals(
          jemalloc,
          scrape.stream().anyMatch(s -> s.name().equals(name)),
          name + " under " + allocator);
    }
    assertEquals(
        Map.of("allocator", allocator),
        one(scrape, "nativemem_allocator_allocated_bytes").labels());

    // RSS moves (start-up, a collection uncommitting heap): the scrape's figure lies between the
    // readings around it (a little margin: a reading starts before its scrape).
    double rss = one(scrape, "nativemem_process_rss_bytes").value();
    double rssBefore = Double.parseDouble(truth.get("rss_bytes"));
    double rssAfter = Double.parseDouble(truthAfter.get("rss_bytes"));
    assertTrue(
        rss >= Math.min(rssBefore, rssAfter) * 0.95 && rss <= Math.max(rssBefore, rssAfter) * 1.05,
        rss + " vs RSS read by the API before " + rssBefore + " and after " + rssAfter);
    assertEquals(
        Double.parseDouble(truth.get("profiling_ready")),
        one(scrape, "nativemem_profiling_ready").value());
    assertEquals("1", truth.get("agent_active"), "the agent is attached");
    if (truth.containsKey("limit_bytes")) {
      assertEquals(
          Double.parseDouble(truth.get("limit_bytes")),
          one(scrape, "nativemem_container_limit_bytes").value());
    } else {
      assertTrue(
          scrape.stream().noneMatch(s -> s.name().startsWith("nativemem_container_limit")),
          "no limit, no series: " + all);
    }
    double heap = one(scrape, "nativemem_jvm_heap_committed_bytes").value();
    double trueHeap = Double.parseDouble(truth.get("heap_committed_bytes"));
    assertTrue(Math.abs(heap - trueHeap) <= trueHeap * 0.5, heap + " vs " + trueHeap);
  }

  @Test
  void plantedOpenInflatersShowInTheHandleSeries() throws Exception {
    double before = valueOr0(scrape(base), "nativemem_handles_open", "kind", "Inflater");
    int planted = 40;
    get(base, "/plant/open-inflaters?count=" + planted);
    double after =
        awaitValue("nativemem_handles_open", v -> v >= before + planted, "kind", "Inflater");
    long truth = Long.parseLong(get(base, "/truth").get("inflater_open"));
    assertTrue(after >= planted, after + " open Inflaters published, " + planted + " planted");
    assertTrue(
        Math.abs(after - truth) <= 4,
        after + " published vs " + truth + " in NativeHandles.report() read just after");
  }

  @Test
  void droppedResourceStreamsAreLeakedUnderTheirCatalogueEntry() throws Exception {
    int dropped = 30;
    Map<String, String> planted = get(base, "/plant/dropped-streams?count=" + dropped);
    assertEquals(String.valueOf(dropped), planted.get("streams_collected"), planted.toString());
    double known =
        awaitValue(
            "nativemem_handles_leaked_total",
            v -> v >= dropped,
            "kind",
            "Inflater",
            "known",
            UNCLOSED_STREAM);
    Map<String, String> truth = get(base, "/truth");
    assertEquals(Double.parseDouble(truth.get("inflater_leaked_unclosed_resource")), known);
    double allLeaked =
        scrape(base).stream()
            .filter(s -> s.name().equals("nativemem_handles_leaked_total"))
            .filter(s -> "Inflater".equals(s.labels().get("kind")))
            .mapToDouble(s -> s.value())
            .sum();
    // The reader's site counts every dropped stream; the kind's own total may count fewer (see
    // NativeMemoryMetric.HANDLES_LEAKED): the series of the kind cover at least that total.
    assertTrue(
        allLeaked >= Double.parseDouble(truth.get("inflater_leaked")),
        allLeaked + " vs " + truth.get("inflater_leaked"));
  }

  @Test
  void thePropertySwitchesTheGaugesOff() throws Exception {
    try (RunningApp off =
        new AppJvm("actuator-off")
            .start(
                APP,
                "--server.port=0",
                "--server.address=127.0.0.1",
                "--nativemem.metrics.enabled=false")) {
      String url = "http://127.0.0.1:" + off.awaitCounter("port", START);
      List<Sample> scrape = scrape(url);
      assertTrue(scrape.stream().anyMatch(s -> s.name().startsWith("jvm_")), scrape.toString());
      assertTrue(
          scrape.stream().noneMatch(s -> s.name().startsWith("nativemem_")), scrape.toString());
    }
  }

  /** Its native library unloadable: no gauges, one warning saying why, the application serves. */
  @Test
  void withoutItsNativeLibraryTheApplicationRunsWithoutTheGauges() throws Exception {
    RunningApp broken =
        new AppJvm("actuator-no-library")
            .withoutAgent()
            .jvmArg("-Dnativemem.library.path=/nonexistent/libnativemem.so")
            .start(APP, "--server.port=0", "--server.address=127.0.0.1");
    try {
      String url = "http://127.0.0.1:" + broken.awaitCounter("port", START);
      HttpResponse<String> health = request(url + "/actuator/health");
      assertEquals(200, health.statusCode(), health.body());
      assertTrue(health.body().contains("\"UP\""), health.body());
      List<Sample> scrape = scrape(url);
      assertTrue(scrape.stream().anyMatch(s -> s.name().startsWith("jvm_")), scrape.toString());
      assertTrue(
          scrape.stream().noneMatch(s -> s.name().startsWith("nativemem_")), scrape.toString());
      scrape(url); // a second scrape warns no more
    } finally {
      AppRun run = broken.stop();
      assertEquals(1, run.lines("nativemem gauges not published"), run.toString());
      assertEquals(1, run.lines("/nonexistent/libnativemem.so"), "the warning says why:\n" + run);
    }
  }

  private static double awaitValue(String name, Predicate<Double> done, String... labels)
      throws Exception {
    long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
    double value = Double.NaN;
    while (System.nanoTime() < deadline) {
      value = valueOr0(scrape(base), name, labels);
      if (done.test(value)) {
        return value;
      }
      Thread.sleep(300);
    }
    throw new AssertionError(name + Arrays.toString(labels) + " stayed at " + value);
  }

  private static double valueOr0(List<Sample> scrape, String name, String... labels) {
    Map<String, String> wanted = new LinkedHashMap<>();
    for (int i = 0; i < labels.length; i += 2) {
      wanted.put(labels[i], labels[i + 1]);
    }
    return scrape.stream()
        .filter(s -> s.name().equals(name) && s.labels().equals(wanted))
        .mapToDouble(s -> s.value())
        .findFirst()
        .orElse(0);
  }

  private static Sample one(List<Sample> scrape, String name) {
    List<Sample> found =
        scrape.stream().filter(s -> s.name().equals(name)).collect(Collectors.toList());
    assertEquals(1, found.size(), name + ": " + found);
    return found.get(0);
  }

  private static List<Sample> scrape(String url) throws Exception {
    HttpResponse<String> response = request(url + "/actuator/prometheus");
    assertEquals(200, response.statusCode(), response.body());
    return PrometheusText.parse(response.body()).samples();
  }

  /** The application's {@code key value} lines. */
  private static Map<String, String> get(String url, String path) throws Exception {
    HttpResponse<String> response = request(url + path);
    assertEquals(200, response.statusCode(), path + ": " + response.body());
    Map<String, String> lines = new LinkedHashMap<>();
    for (String line : response.body().split("\n")) {
      String[] kv = line.split(" ", 2);
      if (kv.length == 2) {
        lines.put(kv[0], kv[1]);
      }
    }
    return lines;
  }

  private static HttpResponse<String> request(String url) throws Exception {
    return HTTP.send(
        HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(30)).build(),
        HttpResponse.BodyHandlers.ofString());
  }
}
