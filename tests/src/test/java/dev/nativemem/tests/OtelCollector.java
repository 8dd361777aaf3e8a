package dev.nativemem.tests;

import java.io.IOException;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * An OpenTelemetry Collector v0.165.0 built from its Go modules (tests/otelcol-sink: the OTLP
 * receiver with the feature gate service.profilesSupport, and a sink exporter that writes one JSON
 * summary line per request received), started on 127.0.0.1. The binary is cached in {@code
 * ~/.cache/nativemem/otelcol-sink-<sha256 of go.sum and the sources>}, so a second run does not
 * build it.
 */
final class OtelCollector implements AutoCloseable {
  static final Path SOURCES = Paths.get(System.getProperty("user.dir"), "otelcol-sink");

  final int port;
  final Path received;
  private final Process process;
  private final Path log;

  private OtelCollector(int port, Path received, Process process, Path log) {
    this.port = port;
    this.received = received;
    this.process = process;
    this.log = log;
  }

  /** Go, when installed: on PATH or in /usr/local/go; null otherwise. */
  static Path go() {
    if (ForkedJvm.onPath("go")) {
      for (String dir : System.getenv().getOrDefault("PATH", "").split(":")) {
        Path go = Paths.get(dir, "go");
        if (Files.isExecutable(go)) {
          return go;
        }
      }
    }
    Path installed = Paths.get("/usr/local/go/bin/go");
    return Files.isExecutable(installed) ? installed : null;
  }

  /** The collector binary, built once per content of its sources. */
  static Path binary(Path go) throws Exception {
    MessageDigest sha = MessageDigest.getInstance("SHA-256");
    for (String file : new String[] {"go.mod", "go.sum", "main.go", "resolver.go"}) {
      sha.update(Files.readAllBytes(SOURCES.resolve(file)));
    }
    StringBuilder hex = new StringBuilder();
    for (byte b : sha.digest()) {
      hex.append(String.format("%02x", b));
    }
    Path cache =
        Paths.get(System.getProperty("user.home"), ".cache", "nativemem")
            .resolve("otelcol-sink-" + hex.substring(0, 16));
    Path binary = cache.resolve("otelcol-sink");
    if (Files.isExecutable(binary)) {
      return binary;
    }
    Files.createDirectories(cache);
    Path partial = cache.resolve("otelcol-sink.partial");
    Process build =
        new ProcessBuilder(go.toString(), "build", "-o", partial.toString(), ".")
            .directory(SOURCES.toFile())
            .redirectErrorStream(true)
            .start();
    String output = new String(build.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    if (!build.waitFor(15, TimeUnit.MINUTES) || build.exitValue() != 0) {
      throw new IllegalStateException("go build of the collector failed:\n" + output);
    }
    Files.move(partial, binary);
    return binary;
  }

  static OtelCollector start(Path binary, Path dir) throws Exception {
    int port;
    try (ServerSocket socket = new ServerSocket(0)) {
      port = socket.getLocalPort();
    }
    Path received = dir.resolve("received.jsonl");
    Path config = dir.resolve("collector.yaml");
    Files.write(
        config,
        String.join(
                "\n",
                "receivers:",
                "  otlp:",
                "    protocols:",
                "      http:",
                "        endpoint: 127.0.0.1:" + port,
                "exporters:",
                "  sink:",
                "    path: " + received,
                "service:",
                "  telemetry:",
                "    metrics:",
                "      level: none",
                "  pipelines:",
                "    profiles:",
                "      receivers: [otlp]",
                "      exporters: [sink]",
                "")
            .getBytes(StandardCharsets.UTF_8));
    Path log = dir.resolve("collector.log");
    List<String> command = new ArrayList<>();
    command.add(binary.toString());
    command.add("--config=file:" + config);
    command.add("--feature-gates=service.profilesSupport");
    Process process =
        new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile()).start();
    OtelCollector collector = new OtelCollector(port, received, process, log);
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
    while (!collector.log().contains("Everything is ready")) {
      if (!process.isAlive() || System.nanoTime() > deadline) {
        collector.close();
        throw new IllegalStateException("the collector did not start:\n" + collector.log());
      }
      Thread.sleep(100);
    }
    return collector;
  }

  String log() throws IOException {
    return new String(Files.readAllBytes(log), StandardCharsets.UTF_8);
  }

  /** The summary lines the sink wrote so far. */
  List<String> received() throws IOException {
    return Files.exists(received) ? Files.readAllLines(received) : new ArrayList<>();
  }

  @Override
  public void close() throws Exception {
    process.destroy();
    if (!process.waitFor(10, TimeUnit.SECONDS)) {
      process.destroyForcibly();
    }
  }
}
