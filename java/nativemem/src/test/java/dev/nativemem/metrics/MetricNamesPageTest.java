package dev.nativemem.metrics;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.Locale;

/**
 * docs/metrics-names.md is the metric table as a page: this test renders the table and fails when
 * the page differs, writing the rendering to target/metrics-names.md to copy over the page.
 */
class MetricNamesPageTest {
  private static final Path PAGE =
      Paths.get(System.getProperty("user.dir")).resolve("../../docs/metrics-names.md").normalize();

  static String render() {
    StringBuilder page = new StringBuilder();
    page.append("# Metric names\n\n")
        .append("The series nativemem publishes, generated from its metric table")
        .append(" (`dev.nativemem.metrics.NativeMemoryMetric`; `MetricNamesPageTest` fails when")
        .append(
            " this page and the table differ). Micrometer (`nativemem-micrometer`), the MXBean's")
        .append(" `Series` attribute with docs/jmx-exporter.yaml, and Flink after")
        .append(" docs/prometheus-flink-relabel.yaml all publish these names;")
        .append(" docs/prometheus-alerts.yaml alerts on them.\n\n")
        .append("A gauge goes up and down. A counter only grows while the JVM lives: Prometheus")
        .append(" names it with `_total`; alert on its `increase()`, never on `> 0`, which would")
        .append(" not clear. A figure this process does not have is absent, never -1 or 0.\n\n")
        .append("| Micrometer name | Prometheus series | type | unit | tags | meaning |\n")
        .append("| --- | --- | --- | --- | --- | --- |\n");
    for (NativeMemoryMetric m : NativeMemoryMetric.values()) {
      page.append("| `")
          .append(m.metricName())
          .append("` | `")
          .append(m.prometheusName())
          .append("` | ")
          .append(m.type().name().toLowerCase(Locale.ROOT))
          .append(" | ")
          .append(m.baseUnit().orElse(""))
          .append(" | ")
          .append(m.tagKeys().isEmpty() ? "" : "`" + String.join("`, `", m.tagKeys()) + "`")
          .append(" | ")
          .append(m.description().replace("|", "\\|"))
          .append(" |\n");
    }
    return page.toString();
  }

  @org.junit.jupiter.api.Test
  void thePageIsTheTable() throws Exception {
    String expected = render();
    String actual =
        Files.exists(PAGE) ? new String(Files.readAllBytes(PAGE), StandardCharsets.UTF_8) : "";
    if (!expected.equals(actual)) {
      Path rendered = Paths.get("target", "metrics-names.md");
      Files.createDirectories(rendered.getParent());
      Files.write(rendered, expected.getBytes(StandardCharsets.UTF_8));
      assertEquals(
          expected,
          actual,
          "docs/metrics-names.md is not the table: copy " + rendered + " over it");
    }
  }
}
