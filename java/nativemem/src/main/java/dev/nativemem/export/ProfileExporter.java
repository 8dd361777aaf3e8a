package dev.nativemem.export;

import dev.nativemem.base.Setting;
import dev.nativemem.internal.FileTrees;
import dev.nativemem.internal.Json;
import dev.nativemem.internal.NativeBridge;
import dev.nativemem.internal.NativeLibraryLoader;
import dev.nativemem.memory.MemoryReader;
import dev.nativemem.profile.HeapProfiler;
import dev.nativemem.profile.sampling.JavaFramesSetting;
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
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.ReentrantLock;

/**
 * Continuous export of the live native heap: every interval a dump into a private directory, made
 * into one request body in the native library (OTLP profiles or Pyroscope's pprof), then removed; a
 * second thread sends the bodies with the JDK's HTTP client. Both are daemon threads of their own:
 * no application thread waits for them. The queue between them holds {@value #QUEUE} bodies; a new
 * one pushes out the oldest when the endpoint is slow or down, and each body that is never
 * delivered (pushed out, or refused after {@value #ATTEMPTS} attempts with backoff) counts in
 * {@link #dropped()} (the metric {@code nativemem.export.dropped}).
 *
 * <p>When the JVM exits normally (its last thread ends, {@code System.exit}, SIGTERM from a pod's
 * stop), a shutdown hook exports the interval begun since the last export and sends what is still
 * queued, one attempt each, within {@value #AT_EXIT_SECONDS} s in all; what it cannot deliver in
 * that time counts as dropped. A JVM killed outright (SIGKILL, the kernel's OOM killer) runs no
 * hook: the last interval is lost, which is what the memory watch's incident bundle is for.
 */
public final class ProfileExporter {
  static final int QUEUE = 4;
  static final int ATTEMPTS = 4;
  private static final Duration FIRST_BACKOFF = Duration.ofSeconds(1);
  private static final int CONNECT_TIMEOUT_MS = 10_000;
  private static final int READ_TIMEOUT_MS = 30_000;

  /** What the export at exit may add to a JVM's exit, at most. */
  static final int AT_EXIT_SECONDS = 5;

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

  /** Start of the interval the next profile covers, in epoch milliseconds. */
  private volatile long intervalStart = System.currentTimeMillis();

  /** Held while a dump is taken and made into a body: the exit's last one waits for it. */
  private final ReentrantLock capturing = new ReentrantLock();

  private Thread capturer;
  private Thread sender;

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
    // On unless refused: -Dnativemem.profile.javaFrames=true asks for them as well as no setting.
    if (!JavaFramesSetting.refused(settings)) {
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
    exporter.capturer = exporter.thread("nativemem-export", exporter::captureLoop);
    exporter.sender = exporter.thread("nativemem-export-send", exporter::sendLoop);
    exporter.capturer.start();
    exporter.sender.start();
    Runtime.getRuntime()
        .addShutdownHook(new Thread(exporter::exportAtExit, "nativemem-export-at-exit"));
    running = exporter;
  }

  private Thread thread(String name, Runnable body) {
    Thread t = new Thread(body, name);
    t.setDaemon(true);
    t.setPriority(Thread.MIN_PRIORITY);
    return t;
  }

  private void captureLoop() {
    while (true) {
      try {
        Thread.sleep(config.interval.toMillis());
      } catch (InterruptedException e) {
        return;
      }
      capturing.lock();
      try {
        if (Thread.currentThread().isInterrupted()) {
          return; // the exit takes the last interval
        }
        Body body = captureInterval();
        while (!queue.offer(body)) {
          if (queue.poll() != null) {
            DROPPED.incrementAndGet();
          }
        }
      } catch (RuntimeException e) {
        System.err.println("nativemem export: no profile this interval: " + e.getMessage());
      } finally {
        capturing.unlock();
      }
    }
  }

  /** The body of the interval since the last one, which ends now; called holding the lock. */
  private Body captureInterval() {
    long from = intervalStart;
    long until = System.currentTimeMillis();
    intervalStart = until;
    return new Body(capture(until, until - from), from / 1000, until / 1000);
  }

  /**
   * The shutdown hook: the export threads stop, the interval since the last export becomes one more
   * body, and every body not yet delivered is sent once, all within {@value #AT_EXIT_SECONDS} s;
   * the rest counts as dropped. The bound holds for the whole of it, not per read: the work runs on
   * a daemon thread that the hook waits for until the deadline and then leaves behind (the JVM does
   * not wait for daemon threads), so an endpoint that answers a byte a second, a request body it
   * reads slowly, or a dump that takes long cannot hold the exit.
   */
  void exportAtExit() {
    long deadline = System.nanoTime() + AT_EXIT_SECONDS * 1_000_000_000L;
    capturer.interrupt();
    sender.interrupt();
    Thread worker = new Thread(() -> sendAtExit(deadline), "nativemem-export-at-exit-send");
    worker.setDaemon(true);
    worker.start();
    try {
      worker.join(Math.max(1, remainingMillis(deadline)));
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    synchronized (atExit) {
      atExit.over = true;
      List<Body> rest = new ArrayList<>();
      queue.drainTo(rest);
      DROPPED.addAndGet(atExit.unsettled + rest.size());
      atExit.unsettled = 0;
    }
    if (worker.isAlive()) {
      worker.interrupt();
    }
  }

  /**
   * The bodies the exit took and has not yet counted as sent or dropped, and whether time is up.
   */
  private static final class AtExit {
    boolean over;
    int unsettled;
  }

  private final AtExit atExit = new AtExit();

  /** The exit's work, on its own thread: what it settles after the deadline is not counted. */
  private void sendAtExit(long deadline) {
    List<Body> last = new ArrayList<>();
    synchronized (atExit) {
      if (atExit.over) {
        return;
      }
      queue.drainTo(last);
      atExit.unsettled += last.size();
    }
    Body interval = null;
    try {
      // A dump being made is waited for, while time is left to send it.
      if (capturing.tryLock(remainingMillis(deadline) * 3 / 5, TimeUnit.MILLISECONDS)) {
        try {
          interval = captureInterval();
        } finally {
          capturing.unlock();
        }
      } // else a dump still being made: its interval is lost
    } catch (InterruptedException | RuntimeException e) {
      System.err.println("nativemem export: no profile at exit: " + e.getMessage());
    }
    synchronized (atExit) {
      if (atExit.over) {
        return;
      }
      if (interval != null) {
        last.add(interval);
        atExit.unsettled++;
      }
    }
    for (Body body : last) {
      int millis = (int) remainingMillis(deadline) / 2; // to connect, then to read the reply
      boolean delivered = false;
      if (millis > 0) {
        try {
          delivered = post(body, millis, millis) / 100 == 2;
        } catch (IOException e) {
          delivered = false;
        }
      }
      synchronized (atExit) {
        if (atExit.over) {
          return;
        }
        atExit.unsettled--;
        if (delivered) {
          SENT.incrementAndGet();
          SENT_BYTES.addAndGet(body.bytes.length);
        } else {
          DROPPED.incrementAndGet();
        }
      }
    }
  }

  private static long remainingMillis(long deadlineNanos) {
    return Math.max(0, (deadlineNanos - System.nanoTime()) / 1_000_000);
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
        DROPPED.incrementAndGet(); // stopped between attempts by the exit
        return;
      }
    }
  }

  private void deliver(Body body) throws InterruptedException {
    Duration backoff = FIRST_BACKOFF;
    String problem = null;
    for (int attempt = 1; attempt <= ATTEMPTS; attempt++) {
      try {
        int status = post(body, CONNECT_TIMEOUT_MS, READ_TIMEOUT_MS);
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
  private int post(Body body, int connectTimeoutMillis, int readTimeoutMillis) throws IOException {
    URI uri =
        config.protocol == ExportConfig.Protocol.OTLP
            ? config.endpoint
            : pyroscopeUri(config.endpoint, labels, body.fromSeconds, body.untilSeconds);
    HttpURLConnection http = (HttpURLConnection) uri.toURL().openConnection();
    http.setConnectTimeout(connectTimeoutMillis);
    http.setReadTimeout(readTimeoutMillis);
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
