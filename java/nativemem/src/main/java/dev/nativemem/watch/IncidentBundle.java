package dev.nativemem.watch;

import dev.nativemem.incident.IncidentLog;
import dev.nativemem.incident.IncidentPage;
import dev.nativemem.incident.layout.BundleLayout;
import dev.nativemem.internal.AppLog;
import dev.nativemem.internal.DirectoryHandle;
import dev.nativemem.internal.Json;
import dev.nativemem.internal.NativeLibraryLoader;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Consumer;

/**
 * Writes one incident bundle (the layout in docs/watch.md): a 0700 directory made under a temporary
 * name in the watch directory, files 0600 made new, {@code manifest.json} listing what is in it and
 * what could not be captured and why, then renamed to its final name, so a reader never sees half a
 * bundle. Every step goes through directory handles (the watch directory's and the temporary
 * directory's, {@link DirectoryHandle}): nothing is looked up by name above them. Each part is
 * captured on its own ({@link BundleCapture} says from what, {@link BundleParts} how): one that
 * fails is listed as missing and the others are still written; a full volume (ENOSPC) fails the
 * whole capture and removes its temporary directory. The cheapest and most telling parts come
 * first, should the process be killed while writing (then only a temporary directory stays, removed
 * by the next watch). A trimmed capture (the volume is short of space) leaves out the heap profile,
 * the page and the allocator's report.
 */
final class IncidentBundle {
  static final String SCHEMA = "nativemem-incident/1";
  static final String PREFIX = "nativemem-incident-";
  static final String TEMP_PREFIX = "." + PREFIX;

  private static final DateTimeFormatter STAMP =
      DateTimeFormatter.ofPattern("yyyyMMdd'T'HHmmss'Z'", Locale.ROOT).withZone(ZoneOffset.UTC);

  /**
   * Writes {@code incident.html} into a finished bundle, last before the rename (tests replace it);
   * null writes no page and the manifest says so.
   */
  static volatile Consumer<Path> incidentPage = IncidentPage::write;

  /**
   * Where the verdict's lines go ({@link IncidentLog}): file descriptor 2, the process's standard
   * error, which a container runtime keeps as the container's log whatever {@code System.err} was
   * replaced with (tests replace this).
   */
  static volatile OutputStream verdictLog = new FileOutputStream(FileDescriptor.err);

  /** The verdict's logger where the application has SLF4J. */
  private static final AppLog INCIDENT_LOG = AppLog.get("dev.nativemem.incident");

  private final boolean profile;
  private final BundleTimeline timeline;
  private final long physicalMemory;

  IncidentBundle(WatchOptions options, int ringCapacity, long physicalMemory) {
    this.profile = options.profile();
    this.timeline = new BundleTimeline(ringCapacity, options.interval().toMillis());
    this.physicalMemory = physicalMemory;
  }

  /** {@code nativemem-incident-<pid>-<UTC time>-<kind>}. */
  static String name(long pid, Instant at, Trigger.Kind kind) {
    return PREFIX + pid + "-" + STAMP.format(at) + "-" + kind.word();
  }

  /**
   * Captures and renames a bundle into the watch directory; returns its path.
   *
   * @param directory the watch directory's handle
   * @param previous the name of this process's previous bundle (its profile is the diff's base), or
   *     null
   * @param trimmed why the capture is trimmed (no profile, page or raw allocator statistics), or
   *     null
   * @throws IOException if the bundle directory cannot be made or renamed, or the volume fills up
   *     (nothing stays)
   */
  Path write(
      DirectoryHandle directory, Trigger trigger, SampleRing ring, String previous, String trimmed)
      throws IOException {
    long started = System.nanoTime();
    long pid = ProcessHandle.current().pid();
    Instant at = Instant.now().truncatedTo(ChronoUnit.MILLIS);
    String name = name(pid, at, trigger.kind());
    // Names have a resolution of a second: a second capture within it (written, or being written
    // by another capture thread) waits for the next.
    DirectoryHandle begun;
    while ((begun = begin(directory, name)) == null) {
      sleepUntilNextSecond(at);
      at = Instant.now().truncatedTo(ChronoUnit.MILLIS);
      name = name(pid, at, trigger.kind());
    }
    try (DirectoryHandle temp = begun) {
      return write(directory, temp, trigger, ring, previous, trimmed, started, pid, at, name);
    } finally {
      WRITING.remove(name);
    }
  }

  /**
   * The bundle {@code name} begun in a fresh private directory under a temporary name ({@code
   * incident_bundle_begin}), or null when the name is taken, on the volume or by another capture
   * thread writing it now.
   */
  private static DirectoryHandle begin(DirectoryHandle directory, String name) {
    if (!WRITING.add(name)) {
      return null;
    }
    try {
      Map<String, Object> begun =
          Json.parseObject(directory.call("incident_bundle_begin", Map.of("name", name)));
      if (begun.get("bundle") != null) {
        return DirectoryHandle.adopt(
            Json.number(begun, "bundle"),
            directory.path().resolve(Json.string(begun, "temporary")));
      }
    } catch (RuntimeException e) {
      WRITING.remove(name);
      throw e;
    }
    WRITING.remove(name);
    return null;
  }

  /** The names of the bundles being written now, by any capture thread. */
  private static final Set<String> WRITING = ConcurrentHashMap.newKeySet();

  private Path write(
      DirectoryHandle directory,
      DirectoryHandle temp,
      Trigger trigger,
      SampleRing ring,
      String previous,
      String trimmed,
      long started,
      long pid,
      Instant at,
      String name)
      throws IOException {
    String tempName = temp.path().getFileName().toString();
    Path target = directory.path().resolve(name);
    boolean done = false;
    boolean announced = false;
    // A trimmed capture (an escalation in the last seconds before a kill) is published as soon as
    // its verdict parts are written: in a process reclaiming at its limit the rest can take
    // seconds the kill does not leave.
    boolean early = trimmed != null;
    try {
      BundleParts parts = new BundleParts(temp);
      BundleCapture capture = new BundleCapture(parts);
      capture.verdictParts(timeline, ring, profile, trimmed);
      Map<String, Object> manifest = manifest(pid, at, trigger, previous, basis(ring), parts);
      manifest.put("capture_ms", (System.nanoTime() - started) / 1_000_000);
      if (early) {
        Map<String, Object> first = new LinkedHashMap<>(manifest);
        List<Object> missing = new ArrayList<>(parts.missing);
        missing.add(BundleParts.entry("the advice and the rest of this capture", STILL_CAPTURING));
        first.put("missing", missing);
        parts.replaceAtomically(BundleLayout.MANIFEST, Json.writeWithNulls(first));
        publish(directory, tempName, name);
        done = true;
      } else {
        parts.replaceAtomically(BundleLayout.MANIFEST, Json.writeWithNulls(manifest));
      }
      // The verdict reaches the log before the rest: the log is what outlives a pod's volumes.
      announced = log(IncidentLog.render(temp.anchored(""), target));
      long captureMs;
      try {
        capture.rest(directory, previous, trimmed);
        // The capture's one duration: the manifest, the page and the log all show this figure.
        captureMs = (System.nanoTime() - started) / 1_000_000;
        manifest.put("capture_ms", captureMs);
        if (early) {
          parts.missing("incident page", trimmed);
        }
        parts.replaceAtomically(BundleLayout.MANIFEST, Json.writeWithNulls(manifest));
      } catch (BundleParts.VolumeFull e) {
        if (!early) {
          throw e;
        }
        // published already: the first manifest stays, and says the rest was not taken
        log(IncidentLog.completed(target, (System.nanoTime() - started) / 1_000_000));
        return target;
      }
      if (early) {
        log(IncidentLog.completed(target, captureMs));
        return target;
      }
      Consumer<Path> page = incidentPage;
      if (trimmed != null) {
        parts.missing("incident page", trimmed);
      } else if (page == null) {
        parts.missing("incident page", "the page renderer is not part of this build");
      } else {
        parts.file(BundleLayout.PAGE, "the incident page", () -> page.accept(temp.anchored("")));
      }
      parts.replaceAtomically(BundleLayout.MANIFEST, Json.writeWithNulls(manifest));
      publish(directory, tempName, name);
      done = true;
      log(IncidentLog.completed(target, captureMs));
      return target;
    } catch (BundleParts.VolumeFull e) {
      IOException full =
          new IOException(
              "the volume of "
                  + directory.path()
                  + " filled up during the capture, so nothing of it was kept ("
                  + e.getCause().getMessage()
                  + ")",
              e.getCause());
      if (announced) {
        log(IncidentLog.notWritten(target, full));
      }
      throw full;
    } catch (Throwable e) {
      if (announced) {
        log(IncidentLog.notWritten(target, e));
      }
      throw e;
    } finally {
      if (!done) {
        directory.removeTree(tempName);
      }
    }
  }

  /** Renames the temporary directory {@code tempName} to the bundle's final {@code name}. */
  private static void publish(DirectoryHandle directory, String tempName, String name)
      throws IOException {
    Object published =
        Json.parse(
            directory.call("incident_bundle_publish", Map.of("temporary", tempName, "name", name)));
    if (!Boolean.TRUE.equals(published)) {
      throw new IOException(directory.path().resolve(name) + " exists already");
    }
  }

  /**
   * Why a published escalation's first manifest leaves out its advice: it is written next, in the
   * bundle in place, and the manifest replaced once it is.
   */
  static final String STILL_CAPTURING =
      "written after this manifest, once the verdict's parts were in place (published first, in the"
          + " last seconds before a kill): a later manifest lists it, unless the process ended or the"
          + " volume filled first";

  private static void sleepUntilNextSecond(Instant at) {
    try {
      Thread.sleep(1000 - at.getNano() / 1_000_000 + 1);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /**
   * Writes {@code text} to the log (one write, so that lines of other threads cannot cut into it)
   * and, where the application logs through SLF4J, each of its lines to the logger {@code
   * dev.nativemem.incident} at WARN (the framework's own log file); returns false if standard error
   * could not be written. Never throws.
   */
  static boolean log(String text) {
    if (AppLog.throughSlf4j()) {
      try {
        for (String line : text.split("\n")) {
          INCIDENT_LOG.log(System.Logger.Level.WARNING, line);
        }
      } catch (RuntimeException | OutOfMemoryError e) {
        // standard error below still has the lines
      }
    }
    try {
      OutputStream out = verdictLog;
      out.write(text.getBytes(StandardCharsets.UTF_8));
      out.flush();
      return true;
    } catch (IOException | RuntimeException | OutOfMemoryError e) {
      return false;
    }
  }

  /** What the limit triggers compared, in the newest sample: said in the manifest. */
  private String basis(SampleRing ring) {
    if (ring.size() > 0 && ring.back(0, SampleRing.LIMIT) >= 0) {
      return "the memory cgroup's limit and usage";
    }
    return "no memory cgroup limit: the limit triggers compare this process's RSS with physical"
        + " memory ("
        + (physicalMemory < 0 ? "unknown: they are off" : physicalMemory + " bytes")
        + ")";
  }

  private Map<String, Object> manifest(
      long pid, Instant at, Trigger trigger, String previous, String basis, BundleParts parts) {
    Map<String, Object> json = new LinkedHashMap<>();
    json.put("schema", SCHEMA);
    json.put("pid", pid);
    json.put("host", Host.NAME);
    json.put(
        "jvm",
        System.getProperty("java.vm.name")
            + " "
            + System.getProperty("java.runtime.version", System.getProperty("java.version")));
    json.put("nativemem", NativeLibraryLoader.javaVersion());
    json.put("captured_at", at.toString());
    json.put("capture_ms", 0L);
    Map<String, Object> t = new LinkedHashMap<>();
    t.put("kind", trigger.kind().word());
    t.put("detail", trigger.detail());
    t.put("threshold_percent", trigger.thresholdPercent());
    json.put("trigger", t);
    json.put("basis", basis);
    json.put("previous_bundle", previous);
    parts.add(BundleLayout.MANIFEST, "this list");
    json.put("files", parts.files);
    json.put("missing", parts.missing);
    return json;
  }

  /** The host's name, read once from the kernel (no DNS lookup at capture time). */
  static final class Host {
    static final String NAME = read();

    private static String read() {
      try {
        byte[] bytes = Files.readAllBytes(Path.of("/proc/sys/kernel/hostname"));
        return new String(bytes, 0, Math.min(bytes.length, 255), StandardCharsets.UTF_8).trim();
      } catch (IOException | RuntimeException e) {
        String env = System.getenv("HOSTNAME");
        return env != null ? env : "unknown";
      }
    }
  }
}
