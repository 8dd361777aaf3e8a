package dev.nativemem.apps.prometheus;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.Reader;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.yaml.snakeyaml.Yaml;

/**
 * Prometheus without code: a JVM with nativemem's agent and the JMX exporter configured by {@code
 * docs/jmx-exporter.yaml}, scraped over HTTP. Each rule's series is in the scrape, named as the
 * metric table names it, with the value the MXBean gives a JMX client in the same JVM.
 */
class JmxExporterTest {
  /** Moves between the scrape and the MXBean read of an idle JVM: far below any alert's scale. */
  private static final double MOVING_BYTES = 8 << 20;

  private static ExporterJvm jvm;
  private static PrometheusText scrape;
  private static Map<String, Double> mxBean;

  @BeforeAll
  static void scrapeOnce() throws Exception {
    jvm =
        ExporterJvm.start(
            Paths.get(System.getProperty("nativemem.test.workdir", "target/runs"), "jmx-exporter"));
    scrape = PrometheusText.parse(jvm.scrape());
    mxBean = jvm.mxBean();
  }

  @AfterAll
  static void stop() throws Exception {
    if (jvm != null) {
      jvm.close();
    }
  }

  @Test
  void everyRuleGivesTheTablesSeriesWithTheMxBeansValue() throws Exception {
    Map<String, String> seriesByAttribute = exporterRules();
    assertTrue(
        seriesByAttribute.keySet().containsAll(mxBean.keySet()),
        "every numeric MXBean attribute has a rule: " + mxBean.keySet());
    for (Map.Entry<String, String> rule : seriesByAttribute.entrySet()) {
      String series = rule.getValue();
      assertTrue(MetricTable.SERIES.contains(series), series + " is not in the metric table");
      double jmx = mxBean.get(rule.getKey());
      double scraped = scrape.only(series).value();
      assertTrue(
          Math.abs(scraped - jmx) <= MOVING_BYTES,
          series + " scraped " + scraped + ", MXBean " + rule.getKey() + " " + jmx);
    }
    assertEquals(
        mxBean.get("LimitBytes"),
        scrape.only("nativemem_container_limit_bytes").value(),
        "the limit does not move");
  }

  @Test
  void theScrapeHasNoNativememSeriesBesideTheRules() throws Exception {
    Set<String> expected = new TreeSet<>(exporterRules().values());
    assertEquals(expected, scrape.names("nativemem_"));
  }

  /** MXBean attribute → series name, from the documented config's rules. */
  static Map<String, String> exporterRules() throws Exception {
    Map<String, String> rules = new LinkedHashMap<>();
    try (Reader reader = Files.newBufferedReader(ExporterJvm.DOCS.resolve("jmx-exporter.yaml"))) {
      Map<String, Object> config = new Yaml().load(reader);
      @SuppressWarnings("unchecked")
      List<Map<String, Object>> list = (List<Map<String, Object>>) config.get("rules");
      for (Map<String, Object> rule : list) {
        String pattern = (String) rule.get("pattern");
        rules.put(pattern.substring(pattern.lastIndexOf('>') + 1), (String) rule.get("name"));
      }
    }
    return rules;
  }
}
