package dev.nativemem.export;

import dev.nativemem.Setting;
import dev.nativemem.internal.FileTrees;
import dev.nativemem.internal.Json;
import dev.nativemem.internal.NativeBridge;
import dev.nativemem.internal.NativeLibraryLoader;
import dev.nativemem.memory.MemoryReader;
import dev.nativemem.profile.HeapProfiler;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.HttpURLConnection;
import java.net.InetAddress;
import java.net.URI;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Continuous export of the live native heap: every interval a dump into a private directory, made
 * into one request body in the native library (OTLP profiles or Pyroscope's pprof), then removed; a
 * second thread sends the bodies with the JDK's HTTP client. Both are daemon threads of their own:
 * no application thread waits for them. The queue between them holds {@value #QUEUE} bodies; a new
 * one pushes out the oldest when the endpoint is slow or down, and each body that is never
 * delivered (pushed out, or refused after {@value #ATTEMPTS} attempts with backoff) counts in
 * {@link #dropped()} (the metric {@code nativemem.export.dropped}).
 */
public final class ProfileExporter {
  static final int QUEUE = 4;
  static final int ATTEMPTS = 4;
  private static final Duration FIRST_BACKOFF = Duration.ofSeconds(1);
  private static final int CONNECT_TIMEOUT_MS = 10_000;
  private static final int READ_TIMEOUT_MS = 30_000;
  private static final AtomicLong SENT = new AtomicLong();
  private static final AtomicLong DROPPED = new AtomicLong();
  private static final AtomicLong SENT_BYTES = new AtomicLong();
  private static ProfileExporter running;

  private final ExportConfig config;
  private final Map<String, String> labels;
  private final Path dir;
  private final BlockingQueue<Body> queue = new ArrayBlockingQueue<>(QUEUE);
  private final SecureRandom ids = new SecureRandom();
  private long sequence;
  private boolean failing;

  private static final class Body {
    final byte[] bytes;
    final long fromSeconds;
    final long untilSeconds;

    Body(byte[] bytes, long fromSeconds, long untilSeconds) {
      this.bytes = bytes;
      this.fromSeconds = fromSeconds;
      this.untilSeconds = untilSeconds;
    }
  }

  private ProfileExporter(ExportConfig config, Map<String, String> labels, Path dir) {
    this.config = config;
    this.labels = labels;
    this.dir = dir;
  }

  /** Bodies delivered since the JVM started. */
  public static long sent() {
    return SENT.get();
  }

  /** Bodies never delivered: pushed out of the full queue, or refused after every attempt. */
  public static long dropped() {
    return DROPPED.get();
  }

  /** Request-body bytes delivered since the JVM started. */
  public static long sentBytes() {
    return SENT_BYTES.get();
  }

  /**
   * Starts the export when {@code nativemem.export} in {@code settings} is {@code otlp} or {@code
   * pyroscope}; once per JVM.
   *
   * @throws IllegalArgumentException naming a bad setting
   * @throws IllegalStateException when heap profiling cannot run here (why, and what to do)
   */
  public static synchronized void startIfOn(Properties settings) {
    ExportConfig config = ExportConfig.parse(settings);
    if (config == null || running != null) {
      return;
    }
    HeapProfiler profiler = HeapProfiler.get();
    if (!profiler.isAvailable()) {
      throw new IllegalStateException(
          Setting.EXPORT + " needs heap profiling: " + profiler.unavailableReason());
    }
    if (!Setting.PROFILE_JAVA_FRAMES.isSet()) {
      try {
        profiler.javaFrames(true);
      } catch (RuntimeException e) {
        System.err.println("nativemem export: without Java frames: " + e.getMessage());
      }
    }
    profiler.start();
    Path dir;
    try {
      // 0700: the dumps are ours alone, and only ours are removed from it.
      dir = Files.createTempDirectory("nativemem-export-");
    } catch (IOException e) {
      throw new IllegalStateException(
          "nativemem export: cannot create its directory in java.io.tmpdir: " + e, e);
    }
    String host;
    try {
      host = InetAddress.getLocalHost().getHostName();
    } catch (IOException e) {
      host = "unknown";
    }
    Map<String, String> labels =
        ExportLabels.of(
            System::getenv,
            host,
            ProcessHandle.current().pid(),
            MemoryReader.allocator().kind().toString().toLowerCase(java.util.Locale.ROOT),
            NativeLibraryLoader.javaVersion());
    ProfileExporter exporter = new ProfileExporter(config, labels, dir);
    exporter.thread("nativemem-export", exporter::captureLoop).start();
    exporter.thread("nativemem-export-send", exporter::sendLoop).start();
    running = exporter;
  }

  private Thread thread(String name, Runnable body) {
    Thread t = new Thread(body, name);
    t.setDaemon(true);
    t.setPriority(Thread.MIN_PRIORITY);
    return t;
  }

  private void captureLoop() {
    long from = System.currentTimeMillis();
    while (true) {
      try {
        Thread.sleep(config.interval.toMillis());
      } catch (InterruptedException e) {
        return;
      }
      long until = System.currentTimeMillis();
      try {
        Body body = new Body(capture(until, until - from), from / 1000, until / 1000);
        while (!queue.offer(body)) {
          if (queue.poll() != null) {
            DROPPED.incrementAndGet();
          }
        }
      } catch (RuntimeException e) {
        System.err.println("nativemem export: no profile this interval: " + e.getMessage());
      }
      from = until;
    }
  }

  /** The request body of a dump taken now; the dump and its sidecar are removed. */
  byte[] capture(long nowMillis, long intervalMillis) {
    Path dump = dir.resolve("export-" + (++sequence) + ".heap");
    Path sidecar = dir.resolve(dump.getFileName() + ".symbols");
    try {
      HeapProfiler.get().dump(dump);
      Map<String, Object> request = new LinkedHashMap<>();
      request.put("dump", dump.toString());
      request.put("protocol", config.protocol.jsonName());
      List<List<String>> resource = new ArrayList<>();
      labels.forEach((k, v) -> resource.add(Arrays.asList(k, v)));
      request.put("resource", resource);
      request.put("time_nanos", nowMillis * 1_000_000L);
      request.put("duration_nanos", intervalMillis * 1_000_000L);
      byte[] id = new byte[16];
      ids.nextBytes(id);
      StringBuilder hex = new StringBuilder();
      for (byte b : id) {
        hex.append(String.format("%02x", b));
      }
      request.put("profile_id", hex.toString());
      return NativeBridge.exportPayload(Json.write(request));
    } finally {
      FileTrees.deleteQuietly(dump);
      FileTrees.deleteQuietly(sidecar);
    }
  }

  private void sendLoop() {
    while (true) {
      Body body;
      try {
        body = queue.take();
      } catch (InterruptedException e) {
        return;
      }
      try {
        deliver(body);
      } catch (InterruptedException e) {
        return;
      }
    }
  }

  private void deliver(Body body) throws InterruptedException {
    Duration backoff = FIRST_BACKOFF;
    String problem = null;
    for (int attempt = 1; attempt <= ATTEMPTS; attempt++) {
      try {
        int status = post(body);
        if (status / 100 == 2) {
          SENT.incrementAndGet();
          SENT_BYTES.addAndGet(body.bytes.length);
          if (failing) {
            failing = false;
            System.err.println("nativemem export: delivering again to " + config.endpoint);
          }
          return;
        }
        problem = "HTTP " + status;
        if (status / 100 == 4 && status != 429 && status != 408) {
          break; // refused as it is: sending it again changes nothing
        }
      } catch (IOException e) {
        problem = e.toString();
      }
      if (attempt < ATTEMPTS) {
        Thread.sleep(backoff.toMillis());
        backoff = backoff.multipliedBy(2);
      }
    }
    DROPPED.incrementAndGet();
    if (!failing) {
      failing = true;
      System.err.println(
          "nativemem export: "
              + config.endpoint
              + " did not take a profile ("
              + problem
              + "); dropped ones are counted in nativemem.export.dropped");
    }
  }

  /** One POST of {@code body}; its HTTP status. */
  private int post(Body body) throws IOException {
    URI uri =
        config.protocol == ExportConfig.Protocol.OTLP
            ? config.endpoint
            : pyroscopeUri(config.endpoint, labels, body.fromSeconds, body.untilSeconds);
    HttpURLConnection http = (HttpURLConnection) uri.toURL().openConnection();
    http.setConnectTimeout(CONNECT_TIMEOUT_MS);
    http.setReadTimeout(READ_TIMEOUT_MS);
    http.setInstanceFollowRedirects(false);
    http.setUseCaches(false);
    http.setDoOutput(true);
    http.setRequestMethod("POST");
    http.setFixedLengthStreamingMode(body.bytes.length);
    http.setRequestProperty(
        "Content-Type",
        config.protocol == ExportConfig.Protocol.OTLP
            ? "application/x-protobuf"
            : "application/octet-stream");
    try (OutputStream out = http.getOutputStream()) {
      out.write(body.bytes);
    }
    int status = http.getResponseCode();
    // Read (a bounded part of) the reply so the connection can be kept for the next export.
    try (InputStream in = status < 400 ? http.getInputStream() : http.getErrorStream()) {
      if (in != null) {
        in.readNBytes(64 * 1024);
      }
    }
    return status;
  }

  /**
   * Pyroscope's {@code /ingest}: {@code name=<service>{label=value,...}} (label names with {@code
   * _} for {@code .}), {@code from}/{@code until} in Unix seconds, {@code format=pprof}.
   */
  static URI pyroscopeUri(URI ingest, Map<String, String> labels, long from, long until) {
    StringBuilder name = new StringBuilder(clean(labels.getOrDefault("service.name", "java")));
    name.append('{');
    boolean first = true;
    for (Map.Entry<String, String> e : labels.entrySet()) {
      if (e.getKey().equals("service.name")) {
        continue;
      }
      name.append(first ? "" : ",")
          .append(e.getKey().replaceAll("[^A-Za-z0-9_]", "_"))
          .append('=')
          .append(clean(e.getValue()));
      first = false;
    }
    name.append('}');
    String query =
        "name="
            + URLEncoder.encode(name.toString(), StandardCharsets.UTF_8)
            + "&from="
            + from
            + "&until="
            + Math.max(until, from + 1)
            + "&format=pprof&spyName=nativemem";
    return URI.create(ingest + "?" + query);
  }

  /** A label value without the characters that end one in Pyroscope's name syntax. */
  private static String clean(String value) {
    return value.replaceAll("[{},=\\s]", "_");
  }
}
