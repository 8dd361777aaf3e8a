package dev.nativemem.export;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.URI;
import java.time.Duration;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Properties;
import org.junit.jupiter.api.Test;

/** The export's settings, its labels and Pyroscope's URL, without a JVM to export from. */
class ExportSettingsTest {
  private static Properties settings(String... pairs) {
    Properties p = new Properties();
    for (int i = 0; i < pairs.length; i += 2) {
      p.setProperty(pairs[i], pairs[i + 1]);
    }
    return p;
  }

  @Test
  void offByDefaultAndEachProtocolAppendsItsPath() {
    assertNull(ExportConfig.parse(new Properties()));
    ExportConfig otlp =
        ExportConfig.parse(
            settings("nativemem.export", "otlp", "nativemem.export.endpoint", "http://c:4318/"));
    assertEquals(URI.create("http://c:4318/v1development/profiles"), otlp.endpoint);
    assertEquals(Duration.ofSeconds(60), otlp.interval);
    ExportConfig pyroscope =
        ExportConfig.parse(
            settings(
                "nativemem.export", "pyroscope",
                "nativemem.export.endpoint", "https://p:4040/base",
                "nativemem.export.interval", "2m"));
    assertEquals(URI.create("https://p:4040/base/ingest"), pyroscope.endpoint);
    assertEquals(Duration.ofMinutes(2), pyroscope.interval);
    assertEquals(Duration.ofMillis(1500), ExportConfig.interval("1500ms"));
    assertEquals(Duration.ofSeconds(30), ExportConfig.interval("30"));
  }

  @Test
  void badSettingsSayWhatToGive() {
    IllegalArgumentException e =
        assertThrows(
            IllegalArgumentException.class,
            () -> ExportConfig.parse(settings("nativemem.export", "jaeger")));
    assertTrue(e.getMessage().contains("otlp, pyroscope or off"), e.getMessage());
    e =
        assertThrows(
            IllegalArgumentException.class,
            () -> ExportConfig.parse(settings("nativemem.export", "otlp")));
    assertTrue(e.getMessage().contains("nativemem.export.endpoint"), e.getMessage());
    for (String endpoint : new String[] {"c:4318", "ftp://c", "http://c/?x=1", "http://"}) {
      e =
          assertThrows(
              IllegalArgumentException.class,
              () ->
                  ExportConfig.parse(
                      settings("nativemem.export", "otlp", "nativemem.export.endpoint", endpoint)));
      assertTrue(e.getMessage().contains("http(s) base URL"), endpoint + ": " + e.getMessage());
    }
    for (String interval : new String[] {"500ms", "0", "-5s", "soon", "1.5s", ""}) {
      e = assertThrows(IllegalArgumentException.class, () -> ExportConfig.interval(interval));
      assertTrue(e.getMessage().contains("1s or more"), interval + ": " + e.getMessage());
    }
  }

  @Test
  void labelsFollowOpenTelemetryAndTheDownwardApi() {
    Map<String, String> env = new HashMap<>();
    env.put("OTEL_RESOURCE_ATTRIBUTES", "service.name=from-attrs,team=native%20memory,broken");
    env.put("POD_NAME", "web-7");
    env.put("POD_NAMESPACE", "shop");
    env.put("K8S_NODE_NAME", "node-3");
    Map<String, String> labels = ExportLabels.of(env::get, "h", 42, "jemalloc", "0.1.0");
    assertEquals("from-attrs", labels.get("service.name"));
    assertEquals("native memory", labels.get("team"));
    assertEquals("web-7", labels.get("k8s.pod.name"));
    assertEquals("shop", labels.get("k8s.namespace.name"));
    assertEquals("node-3", labels.get("k8s.node.name"));
    assertEquals("42", labels.get("process.pid"));
    assertEquals("h", labels.get("host.name"));
    assertEquals("jemalloc", labels.get("nativemem.allocator"));
    assertEquals("0.1.0", labels.get("nativemem.version"));
    env.put("OTEL_SERVICE_NAME", "checkout");
    assertEquals("checkout", ExportLabels.of(env::get, "h", 1, "glibc", "v").get("service.name"));
    assertEquals(
        "unknown_service:java",
        ExportLabels.of(k -> null, "h", 1, "glibc", "v").get("service.name"));
  }

  @Test
  void pyroscopeNameCarriesTheLabelsItsSyntaxAllows() {
    Map<String, String> labels = new LinkedHashMap<>();
    labels.put("service.name", "shop api");
    labels.put("k8s.pod.name", "web-7");
    labels.put("team", "a=b,{c}");
    URI uri = ProfileExporter.pyroscopeUri(URI.create("http://p:4040/ingest"), labels, 100, 100);
    String query =
        java.net.URLDecoder.decode(uri.getRawQuery(), java.nio.charset.StandardCharsets.UTF_8);
    assertEquals(
        "name=shop_api{k8s_pod_name=web-7,team=a_b__c_}&from=100&until=101&format=pprof"
            + "&spyName=nativemem",
        query);
    assertEquals("/ingest", uri.getPath());
  }
}
