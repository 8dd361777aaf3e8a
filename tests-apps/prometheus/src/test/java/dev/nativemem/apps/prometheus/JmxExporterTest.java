package dev.nativemem.apps.prometheus;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.nativemem.apps.harness.MemoryCgroup;
import dev.nativemem.apps.harness.PrometheusConfigs;
import dev.nativemem.apps.harness.PrometheusText;
import dev.nativemem.metrics.NativeMemoryMetric;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.Arrays;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Prometheus without code: a JVM with nativemem's agent and the JMX exporter configured by {@code
 * docs/jmx-exporter.yaml}, scraped over HTTP. The scrape has exactly the MXBean's series, under the
 * metric table's names and labels, with the values a JMX client reads in the same JVM; the
 * container limit is the one the JVM runs under (a cgroup, as in a pod); the planted Inflaters
 * show; the alert rules name only series the scrape has.
 */
class JmxExporterTest {
  /**
   * A figure of bytes may move beyond the MXBean's readings just before and after the scrape by
   * this much (each reading allocates): far below any alert's scale. Counts must lie between them.
   */
  private static final double MOVING_BYTES = 8 << 20;

  /** The pod's memory limit, as a cgroup the child JVM runs in. */
  private static final long LIMIT = 1L << 30;

  private static MemoryCgroup cgroup;
  private static ExporterJvm jvm;
  private static PrometheusText scrape;

  /** The MXBean's series read just before and just after the scrape. */
  private static Map<String, Double> mxBean;

  private static Map<String, Double> mxBeanAfter;
  private static PrometheusText micrometer;

  @BeforeAll
  static void scrapeOnce() throws Exception {
    try {
      cgroup = MemoryCgroup.create(LIMIT);
    } catch (IllegalStateException e) {
      Assumptions.abort("the scrape needs a container limit: " + e.getMessage());
    }
    jvm =
        ExporterJvm.start(
            Paths.get(System.getProperty("nativemem.test.workdir", "target/runs"), "jmx-exporter"),
            cgroup.launcher());
    mxBean = jvm.mxBean();
    scrape = PrometheusText.parse(jvm.scrape());
    mxBeanAfter = jvm.mxBean();
    micrometer = PrometheusText.parse(jvm.micrometerScrape());
  }

  @AfterAll
  static void stop() throws Exception {
    if (jvm != null) {
      jvm.close();
    }
    if (cgroup != null) {
      cgroup.close();
    }
  }

  @Test
  void theScrapeHasTheMxBeansSeriesUnderTheTablesNames() {
    Map<String, Double> scraped = new TreeMap<>();
    for (PrometheusText.Sample s : scrape.samples()) {
      if (s.name().startsWith("nativemem_")) {
        StringBuilder key = new StringBuilder(s.name());
        s.labels().forEach((k, v) -> key.append(';').append(k).append('=').append(v));
        scraped.put(key.toString(), s.value());
      }
    }
    assertEquals(canonical(mxBean.keySet()), scraped.keySet(), "the same series, names and labels");
    Set<String> table =
        Arrays.stream(NativeMemoryMetric.values())
            .map(NativeMemoryMetric::prometheusName)
            .collect(Collectors.toSet());
    assertTrue(
        table.containsAll(scrape.names("nativemem_")), scrape.names("nativemem_").toString());
    assertEquals(mxBean.keySet(), mxBeanAfter.keySet());
    mxBean.forEach(
        (key, before) -> {
          double value = scraped.get(canonical(Set.of(key)).first());
          double after = mxBeanAfter.get(key);
          double slack = key.contains("_bytes") ? MOVING_BYTES : 0;
          assertTrue(
              value >= Math.min(before, after) - slack && value <= Math.max(before, after) + slack,
              key + " scraped " + value + ", MXBean before " + before + " and after " + after);
        });
  }

  @Test
  void theLimitIsTheCgroupsAndHeadroomIsBelowIt() {
    assertEquals(LIMIT, scrape.only("nativemem_container_limit_bytes").value());
    double headroom = scrape.only("nativemem_container_headroom_bytes").value();
    double usage = scrape.only("nativemem_container_usage_bytes").value();
    assertTrue(headroom > 0 && headroom < LIMIT, "headroom " + headroom);
    assertTrue(Math.abs(LIMIT - usage - headroom) <= MOVING_BYTES, usage + " + " + headroom);
  }

  @Test
  void thePreloadAllocatorShowsAsJemallocReadyToProfile() {
    assertTrue(
        scrape.only("nativemem_allocator_resident_bytes", Map.of("allocator", "jemalloc")).value()
            > 0);
    assertEquals(1.0, scrape.only("nativemem_profiling_ready").value());
  }

  @Test
  void plantedInflatersShowAsOpenAndLeakedHandles() {
    double open = scrape.only("nativemem_handles_open", Map.of("kind", "Inflater")).value();
    double leaked =
        scrape
            .only("nativemem_handles_leaked_total", Map.of("kind", "Inflater", "known", "none"))
            .value();
    assertTrue(open >= MxBeanProbe.OPEN_INFLATERS, "open Inflaters " + open);
    assertEquals(MxBeanProbe.DROPPED_INFLATERS, leaked, "leaked Inflaters: the ones dropped");
  }

  /**
   * docs/prometheus-alerts.yaml alerts, and the playbook queries, on series that real scrapes have
   * (a typo would never fire): the JMX exporter's and Micrometer's (nativemem-micrometer's binder,
   * as Spring Boot publishes it). Every series the playbook names is one of the table's.
   */
  @Test
  void alertRulesAndPlaybookQueriesNameOnlySeriesBothScrapesHave() throws Exception {
    Path playbook = PrometheusConfigs.DOCS.resolve("playbook-oomkilled.md");
    Set<String> used =
        new TreeSet<>(
            PrometheusConfigs.seriesInRules(
                PrometheusConfigs.DOCS.resolve("prometheus-alerts.yaml")));
    used.addAll(PrometheusConfigs.seriesInQueries(playbook));
    Map<String, PrometheusText> scrapes = Map.of("JMX exporter", scrape, "Micrometer", micrometer);
    scrapes.forEach(
        (source, text) -> {
          Set<String> missing = new TreeSet<>(used);
          missing.removeAll(text.names("nativemem_"));
          assertTrue(missing.isEmpty(), "not in the " + source + " scrape: " + missing);
        });
    assertEquals(scrape.names("nativemem_"), micrometer.names("nativemem_"), "one set of names");
    Set<String> named = PrometheusConfigs.seriesIn(Files.readString(playbook));
    named.removeAll(tableNames());
    assertTrue(named.isEmpty(), "the playbook names series the table has not: " + named);
  }

  private static Set<String> tableNames() {
    return Arrays.stream(NativeMemoryMetric.values())
        .map(NativeMemoryMetric::prometheusName)
        .collect(Collectors.toSet());
  }

  /** Series keys with their tags sorted, as the scrape's labels come. */
  private static TreeSet<String> canonical(Set<String> keys) {
    TreeSet<String> out = new TreeSet<>();
    for (String key : keys) {
      String[] parts = key.split(";");
      String[] tags = Arrays.copyOfRange(parts, 1, parts.length);
      Arrays.sort(tags);
      out.add(parts[0] + Arrays.stream(tags).map(t -> ";" + t).collect(Collectors.joining()));
    }
    return out;
  }
}
