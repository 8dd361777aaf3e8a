package dev.nativemem.tests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.sun.net.httpserver.HttpServer;
import dev.nativemem.internal.Json;
import dev.nativemem.internal.NativeBridge;
import dev.nativemem.profile.ProfileReport;
import dev.nativemem.profile.ProfileRequest;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.URLDecoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.zip.GZIPInputStream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Continuous export, received by a real OpenTelemetry Collector (v0.165.0, built from its Go
 * modules, {@link OtelCollector}) and by a stub of Pyroscope's documented {@code /ingest} contract
 * (Pyroscope's server cannot be a build dependency: its license). A JVM with the agent and live
 * Inflaters planted from one Java line exports every second; what arrives is compared with the
 * local analysis of a dump.
 */
class ProfileExportTest {
  private static final int PLANTED = 2_000;
  private static final String PLANT = ProfileExportChild.class.getName() + ".plant";

  @BeforeAll
  static void workDirectory() throws Exception {
    HeapProfilingTest.extractPreloadAllocator();
  }

  private static ForkedJvm exportingJvm(String agentOptions) throws Exception {
    return HeapProfilingTest.jvm(HeapProfilingTest.Allocator.DEBIAN)
        .env("OTEL_SERVICE_NAME", "planter")
        .env("OTEL_RESOURCE_ATTRIBUTES", "deployment.environment=test,team=native%20memory")
        .env("POD_NAME", "planter-0")
        .env("POD_NAMESPACE", "jobs")
        .jvmArg("-javaagent:" + ForkedJvm.JAR + "=" + agentOptions);
  }

  /** A child exporting every second for {@code seconds} to {@code server}. */
  private static ForkedJvm.Result exportTo(
      HttpServer server, String protocol, Path dir, int seconds) throws Exception {
    return exportTo(server.getAddress().getPort(), protocol, "1s", dir, seconds);
  }

  /** A child exporting every {@code interval} for {@code seconds} to a local {@code port}. */
  private static ForkedJvm.Result exportTo(
      int port, String protocol, String interval, Path dir, int seconds) throws Exception {
    String endpoint = "http://127.0.0.1:" + port;
    return exportingJvm(
            "export=" + protocol + ",export.endpoint=" + endpoint + ",export.interval=" + interval)
        .main(
            ProfileExportChild.class.getName(),
            dir.resolve("child.heap").toString(),
            "" + seconds,
            "" + PLANTED);
  }

  /** {@code Class.method File.java:line} of the planting line, from {@code SITE} output. */
  private static String plantedLine(ForkedJvm.Result r) {
    String frame = HeapProfilingTest.line(r, "SITE"); // d.n.t.ProfileExportChild.plant(F.java:N)
    String where = frame.substring(frame.indexOf('(') + 1, frame.length() - 1);
    return PLANT + " " + where;
  }

  @Test
  void theCollectorReceivesWhatTheLocalAnalysisOfTheSameDumpShows() throws Exception {
    Path go = OtelCollector.go();
    assumeTrue(go != null, "skipped: Go is not installed (no 'go' on PATH or in /usr/local/go)");
    Path dir = HeapProfilingTest.freshDir("export-otlp");
    Path dump = dir.resolve("child.heap");
    try (OtelCollector collector = OtelCollector.start(OtelCollector.binary(go), dir)) {
      String endpoint = "http://127.0.0.1:" + collector.port;
      ForkedJvm.Result r =
          exportingJvm("export=otlp,export.endpoint=" + endpoint + ",export.interval=1s")
              .main(ProfileExportChild.class.getName(), dump.toString(), "4", "" + PLANTED);
      assertEquals(0, r.exitCode, r + collector.log());
      assertTrue(Long.parseLong(HeapProfilingTest.line(r, "SENT")) >= 2, r.toString());
      assertEquals("0", HeapProfilingTest.line(r, "DROPPED_METRIC"), r.toString());
      List<String> received = collector.received();
      assertTrue(received.size() >= 2, received + collector.log());

      // What the agent sent: the labels, the planted Java line, the mappings' build IDs.
      Map<String, Object> last = Json.parseObject(received.get(received.size() - 1));
      @SuppressWarnings("unchecked")
      Map<String, Object> resource = (Map<String, Object>) last.get("resource");
      assertEquals("planter", resource.get("service.name"), resource.toString());
      assertEquals("test", resource.get("deployment.environment"));
      assertEquals("native memory", resource.get("team"));
      assertEquals("planter-0", resource.get("k8s.pod.name"));
      assertEquals("jobs", resource.get("k8s.namespace.name"));
      assertEquals("jemalloc", resource.get("nativemem.allocator"));
      assertNotNull(resource.get("process.pid"));
      Map<String, Object> space = profile(last, "inuse_space");
      String line = plantedLine(r);
      long agentLine = number(map(space, "lines"), line);
      assertTrue(agentLine > 0, line + " not in " + map(space, "lines").keySet());
      boolean buildIds =
          list(last, "mappings").stream()
              .anyMatch(m -> map(m, "attributes").containsKey("process.executable.build_id.gnu"));
      assertTrue(buildIds, last.get("mappings").toString());

      // The child's own dump, after the exports: its local analysis and the same dump made into
      // an export body by the same native call, sent here, agree.
      ProfileReport report = ProfileRequest.of(dump).top(100_000).report().run().report();
      long local = 0;
      for (ProfileReport.Site site : report.topCumulative()) {
        if (site.name().startsWith(PLANT + "(")) {
          local += site.cumulativeBytes();
        }
      }
      // The heap did not change between the agent's last export and the child's dump but for
      // sampling of a few small allocations: the planted line within 10%.
      assertEquals(1.0, (double) agentLine / local, 0.10, agentLine + " sent, " + local + " local");
      Map<String, Object> sent = postSameDump(collector, dump, received.size());
      Map<String, Object> sentSpace = profile(sent, "inuse_space");
      assertEquals(report.totalBytes(), number(sentSpace, "total"));
      assertEquals(report.totalObjects(), number(profile(sent, "inuse_objects"), "total"));
      // Per line, within one byte per stack of the report (each sample is whole bytes).
      long stacks = report.stackCount();
      for (ProfileReport.Site site : report.topCumulative()) {
        if (site.name().startsWith(PLANT + "(")) {
          String where = site.name().substring(PLANT.length() + 1, site.name().length() - 1);
          long got = number(map(sentSpace, "lines"), PLANT + " " + where);
          assertTrue(
              Math.abs(got - site.cumulativeBytes()) <= stacks,
              site.name() + ": " + got + " received, " + site.cumulativeBytes() + " local");
        }
      }
      // The top function by itself (flat, leaf of its stacks) is the same one on both sides.
      String topLocal = report.topFlat().get(0).name();
      long topBytes = report.topFlat().get(0).flatBytes();
      assertTrue(
          number(map(sentSpace, "functions"), topLocal) >= topBytes - stacks,
          topLocal + " " + map(sentSpace, "functions"));
    }
  }

  /** Makes {@code dump} into an OTLP body in this JVM and posts it; returns its summary line. */
  private static Map<String, Object> postSameDump(OtelCollector collector, Path dump, int before)
      throws Exception {
    Map<String, Object> request = new LinkedHashMap<>();
    request.put("dump", dump.toString());
    request.put("protocol", "otlp");
    request.put("resource", Collections.singletonList(Arrays.asList("service.name", "same")));
    request.put("time_nanos", System.currentTimeMillis() * 1_000_000L);
    request.put("duration_nanos", 1_000_000_000L);
    request.put("profile_id", "00112233445566778899aabbccddeeff");
    byte[] body = NativeBridge.exportPayload(Json.write(request));
    HttpResponse<String> response =
        HttpClient.newHttpClient()
            .send(
                HttpRequest.newBuilder(
                        URI.create(
                            "http://127.0.0.1:" + collector.port + "/v1development/profiles"))
                    .header("Content-Type", "application/x-protobuf")
                    .POST(HttpRequest.BodyPublishers.ofByteArray(body))
                    .build(),
                HttpResponse.BodyHandlers.ofString());
    assertEquals(200, response.statusCode(), response.body() + collector.log());
    for (int i = 0; i < 100; i++) {
      for (String line : collector.received().subList(before, collector.received().size())) {
        Map<String, Object> summary = Json.parseObject(line);
        if ("same".equals(map(summary, "resource").get("service.name"))) {
          return summary;
        }
      }
      Thread.sleep(100);
    }
    throw new AssertionError("the collector wrote nothing for the posted dump");
  }

  /** Pyroscope's {@code /ingest} answering 200, keeping each request's method, query and body. */
  private static HttpServer pyroscopeStub(List<String> queries, List<byte[]> bodies)
      throws IOException {
    HttpServer server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
    server.createContext(
        "/ingest",
        exchange -> {
          queries.add(exchange.getRequestMethod() + " " + exchange.getRequestURI().getRawQuery());
          bodies.add(exchange.getRequestBody().readAllBytes());
          exchange.sendResponseHeaders(200, -1);
          exchange.close();
        });
    server.start();
    return server;
  }

  @Test
  void pyroscopeIngestGetsAPprofWithTheLabelsInItsName() throws Exception {
    List<String> queries = new CopyOnWriteArrayList<>();
    List<byte[]> bodies = new CopyOnWriteArrayList<>();
    HttpServer server = pyroscopeStub(queries, bodies);
    Path dir = HeapProfilingTest.freshDir("export-pyroscope");
    try {
      ForkedJvm.Result r = exportTo(server, "pyroscope", dir, 3);
      assertEquals(0, r.exitCode, r.toString());
      assertFalse(queries.isEmpty(), r.toString());
      Map<String, String> query = query(queries.get(0));
      assertTrue(queries.get(0).startsWith("POST "), queries.get(0));
      assertEquals("pprof", query.get("format"));
      String name = query.get("name");
      assertTrue(name.startsWith("planter{"), name);
      assertTrue(name.contains("k8s_pod_name=planter-0"), name);
      assertTrue(name.contains("team=native_memory"), name);
      assertTrue(
          Long.parseLong(query.get("from")) < Long.parseLong(query.get("until")), query.toString());
      // The body is a gzipped pprof that go tool pprof reads, with the planted Java line.
      byte[] pprof = bodies.get(bodies.size() - 1);
      try (GZIPInputStream in = new GZIPInputStream(new ByteArrayInputStream(pprof))) {
        assertTrue(in.readAllBytes().length > 0);
      }
      Path go = OtelCollector.go();
      if (go != null) {
        Path file = dir.resolve("ingested.pb.gz");
        Files.write(file, pprof);
        String lines = run(go.toString(), "tool", "pprof", "-top", "-lines", file.toString());
        assertTrue(lines.contains(plantedLine(r)), lines);
      }
    } finally {
      server.stop(0);
    }
  }

  /**
   * {@code -Dnativemem.profile.javaFrames=true} asks for the Java frames the export records anyway:
   * the exported profiles carry the planting line all the same.
   */
  @Test
  void theJavaFramesSettingKeepsTheJavaFramesInTheExport() throws Exception {
    List<String> queries = new CopyOnWriteArrayList<>();
    List<byte[]> bodies = new CopyOnWriteArrayList<>();
    HttpServer server = pyroscopeStub(queries, bodies);
    Path dir = HeapProfilingTest.freshDir("export-java-frames");
    try {
      String endpoint = "http://127.0.0.1:" + server.getAddress().getPort();
      ForkedJvm.Result r =
          exportingJvm("export=pyroscope,export.endpoint=" + endpoint + ",export.interval=1s")
              .jvmArg("-Dnativemem.profile.javaFrames=true")
              .main(
                  ProfileExportChild.class.getName(),
                  dir.resolve("child.heap").toString(),
                  "3",
                  "" + PLANTED);
      assertEquals(0, r.exitCode, r.toString());
      assertFalse(bodies.isEmpty(), r.toString());
      boolean planted = false;
      for (byte[] body : bodies) {
        try (GZIPInputStream in = new GZIPInputStream(new ByteArrayInputStream(body))) {
          planted |= new String(in.readAllBytes(), StandardCharsets.ISO_8859_1).contains(PLANT);
        }
      }
      assertTrue(planted, "no exported profile holds the Java frame " + PLANT + ": " + r);
    } finally {
      server.stop(0);
    }
  }

  @Test
  void anEndpointThatIsDownCostsTheApplicationNothingAndCountsDrops() throws Exception {
    HttpServer server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
    server.createContext(
        "/v1development/profiles",
        exchange -> {
          exchange.getRequestBody().readAllBytes();
          exchange.sendResponseHeaders(503, -1);
          exchange.close();
        });
    server.start();
    Path dir = HeapProfilingTest.freshDir("export-down");
    try {
      ForkedJvm.Result r = exportTo(server, "otlp", dir, 12);
      assertEquals(0, r.exitCode, r.toString());
      assertEquals("0", HeapProfilingTest.line(r, "SENT"), r.toString());
      // 4 attempts (1 + 2 + 4 s of backoff) per body while one arrives every second: the queue
      // of 4 overflows, and what is pushed out is counted.
      long dropped = Long.parseLong(HeapProfilingTest.line(r, "DROPPED_METRIC"));
      assertTrue(dropped >= 1, r.toString());
      assertTrue(r.stderr.contains("nativemem.export.dropped"), r.stderr);
      // The application's 10 ms steps never waited for the export.
      assertTrue(Long.parseLong(HeapProfilingTest.line(r, "SLOWEST_STEP_MS")) < 1_000, r.stdout);
    } finally {
      server.stop(0);
    }
  }

  @Test
  void theIntervalBeforeAnExitIsExportedAtTheExit() throws Exception {
    List<String> queries = new CopyOnWriteArrayList<>();
    List<byte[]> bodies = new CopyOnWriteArrayList<>();
    HttpServer server = pyroscopeStub(queries, bodies);
    Path dir = HeapProfilingTest.freshDir("export-at-exit");
    try {
      // Ten minutes between exports: no export comes due while the application runs, only at its
      // exit.
      ForkedJvm.Result r = exportTo(server.getAddress().getPort(), "pyroscope", "600s", dir, 2);
      assertEquals(0, r.exitCode, r.toString());
      assertEquals("0", HeapProfilingTest.line(r, "SENT"), r.toString());
      assertEquals(1, queries.size(), queries + "\n" + r);
      Map<String, String> query = query(queries.get(0));
      long from = Long.parseLong(query.get("from"));
      long until = Long.parseLong(query.get("until"));
      assertTrue(from < until && until - from < 600, query.toString());
      Path go = OtelCollector.go();
      if (go != null) {
        Path file = dir.resolve("at-exit.pb.gz");
        Files.write(file, bodies.get(0));
        String lines = run(go.toString(), "tool", "pprof", "-top", "-lines", file.toString());
        assertTrue(lines.contains(plantedLine(r)), lines);
      } else {
        try (GZIPInputStream in = new GZIPInputStream(new ByteArrayInputStream(bodies.get(0)))) {
          assertTrue(in.readAllBytes().length > 0);
        }
      }
    } finally {
      server.stop(0);
    }
  }

  @Test
  void anEndpointThatNeverAnswersDelaysTheExitByTheExportsBoundAtMost() throws Exception {
    // Accepts connections (the kernel's backlog) and never reads or answers.
    try (ServerSocket silent = new ServerSocket(0, 50, InetAddress.getLoopbackAddress())) {
      Path dir = HeapProfilingTest.freshDir("export-at-exit-silent");
      ForkedJvm.Result r = exportTo(silent.getLocalPort(), "otlp", "600s", dir, 1);
      exitedWithinTheBound(r);
    }
  }

  /** The child ended well, its exit delayed by the export's attempt but within its bound. */
  private static void exitedWithinTheBound(ForkedJvm.Result r) {
    assertEquals(0, r.exitCode, r.toString());
    long exitMillis = System.currentTimeMillis();
    long doneMillis = Long.parseLong(HeapProfilingTest.line(r, "DONE_AT_MS"));
    // The hook's bound is 5 s; the rest of the JVM's exit is far under the margin.
    assertTrue(exitMillis - doneMillis < 5_000 + 4_000, (exitMillis - doneMillis) + " ms");
    assertTrue(exitMillis - doneMillis >= 2_000, "the hook tried: " + (exitMillis - doneMillis));
  }

  /**
   * An endpoint that reads the request and answers one byte a second, forever: no single read waits
   * long, so only a deadline on the whole request ends it.
   */
  @Test
  void anEndpointThatTricklesItsAnswerDelaysTheExitByTheExportsBoundAtMost() throws Exception {
    try (ServerSocket trickling = new ServerSocket(0, 50, InetAddress.getLoopbackAddress())) {
      Thread server =
          new Thread(
              () -> {
                while (!trickling.isClosed()) {
                  try {
                    java.net.Socket client = trickling.accept();
                    Thread answer = new Thread(() -> trickle(client), "trickle");
                    answer.setDaemon(true);
                    answer.start();
                  } catch (IOException e) {
                    return;
                  }
                }
              },
              "trickling-endpoint");
      server.setDaemon(true);
      server.start();
      Path dir = HeapProfilingTest.freshDir("export-at-exit-trickle");
      ForkedJvm.Result r = exportTo(trickling.getLocalPort(), "otlp", "600s", dir, 1);
      exitedWithinTheBound(r);
    }
  }

  /** Reads what comes in, and answers a status line and a header, one byte a second. */
  private static void trickle(java.net.Socket client) {
    try (client) {
      Thread reader =
          new Thread(
              () -> {
                try {
                  client.getInputStream().transferTo(java.io.OutputStream.nullOutputStream());
                } catch (IOException e) {
                  // closed
                }
              });
      reader.setDaemon(true);
      reader.start();
      java.io.OutputStream out = client.getOutputStream();
      byte[] answer = "HTTP/1.1 200 OK\r\nX-Slow: ".getBytes(StandardCharsets.US_ASCII);
      for (int i = 0; ; i++) {
        out.write(i < answer.length ? answer[i] : 'x');
        out.flush();
        Thread.sleep(1000);
      }
    } catch (IOException | InterruptedException e) {
      // the client went away
    }
  }

  private static Map<String, String> query(String line) {
    Map<String, String> query = new LinkedHashMap<>();
    for (String pair : line.substring(line.indexOf(' ') + 1).split("&")) {
      int eq = pair.indexOf('=');
      query.put(
          pair.substring(0, eq), URLDecoder.decode(pair.substring(eq + 1), StandardCharsets.UTF_8));
    }
    return query;
  }

  private static String run(String... command) throws IOException, InterruptedException {
    Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertEquals(0, p.waitFor(), out);
    return out;
  }

  private static Map<String, Object> profile(Map<String, Object> summary, String type) {
    for (Object p : list(summary, "profiles")) {
      if (type.equals(((Map<?, ?>) p).get("type"))) {
        @SuppressWarnings("unchecked")
        Map<String, Object> found = (Map<String, Object>) p;
        return found;
      }
    }
    throw new AssertionError("no " + type + " profile in " + summary);
  }

  @SuppressWarnings("unchecked")
  private static Map<String, Object> map(Object json, String key) {
    Object value = ((Map<String, Object>) json).get(key);
    return value == null ? new LinkedHashMap<>() : (Map<String, Object>) value;
  }

  @SuppressWarnings("unchecked")
  private static List<Object> list(Object json, String key) {
    Object value = ((Map<String, Object>) json).get(key);
    return value == null ? new ArrayList<>() : (List<Object>) value;
  }

  private static long number(Map<String, Object> json, String key) {
    Object value = json.get(key);
    return value == null ? 0 : ((Number) value).longValue();
  }
}
