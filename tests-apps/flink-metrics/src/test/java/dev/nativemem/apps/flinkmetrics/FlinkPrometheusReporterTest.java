package dev.nativemem.apps.flinkmetrics;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.nativemem.NativeMemory;
import dev.nativemem.apps.harness.MarkdownBlocks;
import dev.nativemem.apps.harness.PrometheusConfigs;
import dev.nativemem.apps.harness.PrometheusText;
import dev.nativemem.metrics.NativeMemoryMetric;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.apache.flink.core.execution.JobClient;
import org.junit.jupiter.api.Test;
import org.yaml.snakeyaml.Yaml;

/**
 * The gauges through Flink's own Prometheus reporter, scraped over HTTP as Prometheus does:
 * configured as docs/flink.md says, published once per TaskManager, labelled with the publishing
 * subtask, and renamed to the metric table's series by docs/prometheus-flink-relabel.yaml. (Flink
 * 2.3.0 only: Maven Central serves flink-metrics-prometheus 2.3.0 here, not 1.20.5.)
 */
class FlinkPrometheusReporterTest {
  private static final String RSS =
      "flink_taskmanager_job_task_operator_nativemem_process_rss_bytes";

  @Test
  void prometheusReporterServesTheGaugesUnderTheTablesNamesAfterRelabelling() throws Exception {
    int port;
    try (ServerSocket free = new ServerSocket(0)) {
      port = free.getLocalPort();
    }
    JobClient job = PublishingMap.start(3, documentedReporter(port));
    PrometheusText scrape;
    long rss;
    try {
      String text = scrape(port);
      scrape = PrometheusText.parse(text);
      keepNativememLines(text);
      rss = NativeMemory.snapshot().breakdown().rssBytes();
    } finally {
      PublishingMap.release.countDown();
    }
    job.getJobExecutionResult().get(2, TimeUnit.MINUTES);

    PrometheusText.Sample sample = scrape.only(RSS); // one of three subtasks publishes
    assertTrue(sample.labels().containsKey("tm_id"), sample.toString());
    assertTrue(sample.labels().containsKey("subtask_index"), sample.toString());
    assertTrue(Math.abs(sample.value() - rss) < 32 << 20, sample + " vs NativeMemory " + rss);

    PrometheusText renamed =
        PrometheusConfigs.relabel(
            scrape, PrometheusConfigs.DOCS.resolve("prometheus-flink-relabel.yaml"));
    Set<String> names = renamed.names("nativemem_");
    assertTrue(names.contains("nativemem_process_rss_bytes"), names.toString());
    assertTrue(names.contains("nativemem_allocator_allocated_bytes"), names.toString());
    Set<String> table =
        Arrays.stream(NativeMemoryMetric.values())
            .map(NativeMemoryMetric::prometheusName)
            .collect(Collectors.toSet());
    assertTrue(table.containsAll(names), "not in the metric table: " + names);
    PrometheusText.Sample planted = renamed.only("nativemem_handles_open");
    assertEquals(PlantedHandle.KIND, planted.labels().get("kind"), planted.toString());
    assertEquals(1.0, planted.value(), planted.toString());
    assertEquals(
        NativeMemory.snapshot().breakdown().allocatorKind(),
        renamed.only("nativemem_allocator_allocated_bytes").labels().get("allocator"));
  }

  /** The reporter settings of docs/flink.md's config.yaml, on a free port. */
  private static Map<String, String> documentedReporter(int port) throws Exception {
    Map<String, Object> config =
        new Yaml()
            .load(
                MarkdownBlocks.first(
                    PrometheusConfigs.DOCS.resolve("flink.md"), "## 3. `config.yaml`", "yaml"));
    Map<String, String> reporter = new HashMap<>();
    config.forEach(
        (key, value) -> {
          if (key.startsWith("metrics.reporter.")) {
            reporter.put(key, String.valueOf(value));
          }
        });
    assertEquals(
        "9249", reporter.put("metrics.reporter.prom.port", "" + port), reporter.toString());
    return reporter;
  }

  /** The scrape's nativemem lines, for people reading docs/flink.md or a failure. */
  private static void keepNativememLines(String text) throws Exception {
    Path dir = Files.createDirectories(Paths.get(System.getProperty("nativemem.test.workdir")));
    Files.write(
        dir.resolve("flink-prometheus-nativemem.txt"),
        text.lines().filter(l -> l.contains("_nativemem_")).toList());
  }

  private static String scrape(int port) throws Exception {
    HttpResponse<String> response =
        HttpClient.newHttpClient()
            .send(
                HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/metrics"))
                    .timeout(Duration.ofSeconds(30))
                    .build(),
                HttpResponse.BodyHandlers.ofString());
    assertEquals(200, response.statusCode(), response.body());
    return response.body();
  }
}
