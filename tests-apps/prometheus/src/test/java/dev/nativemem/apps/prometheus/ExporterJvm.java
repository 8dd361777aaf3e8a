package dev.nativemem.apps.prometheus;

import dev.nativemem.apps.harness.PrometheusConfigs;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.Writer;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * {@link MxBeanProbe} in a child JVM with nativemem's agent and the Prometheus JMX exporter on a
 * free local port, configured by {@code docs/jmx-exporter.yaml} as the docs say, under the preload
 * allocator.
 */
final class ExporterJvm implements AutoCloseable {
  private static final Path NATIVEMEM_JAR = Paths.get(System.getProperty("nativemem.jar", ""));
  private static final Path EXPORTER_JAR = Paths.get(System.getProperty("jmx.exporter.jar", ""));
  private static final String JAVA =
      Paths.get(System.getProperty("java.home"), "bin", "java").toString();

  private final Process process;
  private final BufferedReader out;
  private final Writer in;
  private final Path stderr;
  private final int port;

  private ExporterJvm(Process process, Path stderr, int port) {
    this.process = process;
    this.out =
        new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
    this.in = process.outputWriter(StandardCharsets.UTF_8);
    this.stderr = stderr;
    this.port = port;
  }

  /** {@code launcher}: a command that runs {@code java ...} from its arguments (a cgroup's). */
  static ExporterJvm start(Path workDir, String... launcher)
      throws IOException, InterruptedException {
    Files.createDirectories(workDir);
    Path stderr = workDir.resolve("stderr.txt");
    int port;
    try (ServerSocket free = new ServerSocket(0)) {
      port = free.getLocalPort();
    }
    List<String> command = new ArrayList<>(List.of(launcher));
    command.add(JAVA);
    command.add("-javaagent:" + NATIVEMEM_JAR);
    command.add("-Dnativemem.jmx=true");
    command.add(
        "-javaagent:"
            + EXPORTER_JAR
            + "=127.0.0.1:"
            + port
            + ":"
            + PrometheusConfigs.DOCS.resolve("jmx-exporter.yaml").toAbsolutePath());
    command.add("-cp");
    command.add(
        System.getProperty("probe.classes")
            + ":"
            + Files.readString(Paths.get(System.getProperty("probe.classpath.file"))).strip());
    command.add(MxBeanProbe.class.getName());
    ProcessBuilder builder =
        new ProcessBuilder(command).directory(workDir.toFile()).redirectError(stderr.toFile());
    // The setup docs/flink.md and the playbook recommend: the preload allocator (jemalloc), as the
    // build left it beside the jar's classes.
    builder
        .environment()
        .put(
            "LD_PRELOAD",
            NATIVEMEM_JAR
                .toAbsolutePath()
                .resolveSibling(
                    "classes/dev/nativemem/native/linux-x86_64/libnativemem_jemalloc.so")
                .toString());
    builder.environment().remove("MALLOC_CONF");
    builder.environment().remove("JAVA_TOOL_OPTIONS");
    ExporterJvm jvm = new ExporterJvm(builder.start(), stderr, port);
    String first = jvm.out.readLine();
    if (!"ready".equals(first)) {
      jvm.close();
      throw new IllegalStateException(
          "the probe did not start (" + first + "): " + Files.readString(stderr) + command);
    }
    return jvm;
  }

  /** {@code GET /metrics}, as Prometheus scrapes. */
  String scrape() throws IOException, InterruptedException {
    HttpClient client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();
    HttpResponse<String> response =
        client.send(
            HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/metrics"))
                .timeout(Duration.ofSeconds(30))
                .build(),
            HttpResponse.BodyHandlers.ofString());
    if (response.statusCode() != 200) {
      throw new IOException("scrape answered " + response.statusCode() + ": " + response.body());
    }
    return response.body();
  }

  /** The MXBean's series, read in the child as a JMX client reads them. */
  Map<String, Double> mxBean() throws IOException {
    Map<String, Double> series = new LinkedHashMap<>();
    for (String line : ask("read")) {
      String[] parts = line.split(" ");
      series.put(parts[0], Double.parseDouble(parts[1]));
    }
    return series;
  }

  /** What micrometer-registry-prometheus scrapes from nativemem's binder in the child. */
  String micrometerScrape() throws IOException {
    return String.join("\n", ask("micrometer")) + "\n";
  }

  private List<String> ask(String command) throws IOException {
    in.write(command + "\n");
    in.flush();
    List<String> lines = new ArrayList<>();
    for (String line; !"end".equals(line = out.readLine()); ) {
      if (line == null) {
        throw new IOException("the probe ended: " + Files.readString(stderr));
      }
      lines.add(line);
    }
    return lines;
  }

  @Override
  public void close() throws IOException, InterruptedException {
    in.close();
    if (!process.waitFor(30, TimeUnit.SECONDS)) {
      process.destroyForcibly().waitFor();
    }
  }
}
