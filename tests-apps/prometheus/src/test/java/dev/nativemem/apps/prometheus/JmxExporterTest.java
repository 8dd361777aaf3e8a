package dev.nativemem.apps.prometheus;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.nativemem.apps.harness.MetricTable;
import dev.nativemem.apps.harness.PrometheusConfigs;
import dev.nativemem.apps.harness.PrometheusText;
import java.nio.file.Paths;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Prometheus without code: a JVM with nativemem's agent and the JMX exporter configured by {@code
 * docs/jmx-exporter.yaml}, scraped over HTTP. Each rule's series is in the scrape, named as the
 * metric table names it, with the value the MXBean gives a JMX client in the same JVM.
 */
class JmxExporterTest {
  /** Moves between the scrape and the MXBean read of an idle JVM: far below any alert's scale. */
  private static final double MOVING_BYTES = 8 << 20;

  /**
   * Series of the metric table the MXBean does not expose yet (its handle attributes come with the
   * metric table in the core jar): named here so that the rule's check returns when they appear.
   */
  private static final Set<String> NOT_YET_IN_THE_MXBEAN = Set.of("nativemem_handles_leaked");

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

  /** docs/prometheus-alerts.yaml alerts on series a real scrape has (a typo would never fire). */
  @Test
  void alertRulesNameOnlySeriesTheScrapeHas() throws Exception {
    Set<String> used =
        PrometheusConfigs.seriesInRules(PrometheusConfigs.DOCS.resolve("prometheus-alerts.yaml"));
    Set<String> missing = new TreeSet<>(used);
    missing.removeAll(scrape.names("nativemem_"));
    assertEquals(
        NOT_YET_IN_THE_MXBEAN,
        missing,
        "alert rules name series no scrape has (a series that appeared leaves NOT_YET_IN_THE_MXBEAN)");
  }

  /** MXBean attribute → series name, from the documented config's rules. */
  static Map<String, String> exporterRules() throws Exception {
    Map<String, String> rules = new LinkedHashMap<>();
    Map<String, Object> config =
        PrometheusConfigs.load(PrometheusConfigs.DOCS.resolve("jmx-exporter.yaml"));
    @SuppressWarnings("unchecked")
    List<Map<String, Object>> list = (List<Map<String, Object>>) config.get("rules");
    for (Map<String, Object> rule : list) {
      String pattern = (String) rule.get("pattern");
      rules.put(pattern.substring(pattern.lastIndexOf('>') + 1), (String) rule.get("name"));
    }
    return rules;
  }
}
