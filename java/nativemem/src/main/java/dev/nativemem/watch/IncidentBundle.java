package dev.nativemem.watch;

import dev.nativemem.base.Advice;
import dev.nativemem.handles.HandleReport;
import dev.nativemem.handles.NativeHandles;
import dev.nativemem.incident.IncidentLog;
import dev.nativemem.incident.IncidentPage;
import dev.nativemem.incident.layout.BundleLayout;
import dev.nativemem.internal.AppLog;
import dev.nativemem.internal.DirectoryHandle;
import dev.nativemem.internal.Json;
import dev.nativemem.internal.NativeLibraryLoader;
import dev.nativemem.memory.AllocatorInfo;
import dev.nativemem.memory.MemoryReader;
import dev.nativemem.memory.MemorySnapshot;
import dev.nativemem.memory.reading.NmtSummary;
import dev.nativemem.profile.HeapProfile;
import dev.nativemem.profile.HeapProfiler;
import dev.nativemem.profile.ProfileReport;
import dev.nativemem.profile.ProfileRequest;
import java.io.BufferedWriter;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.nio.channels.Channels;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.OpenOption;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
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
 * captured on its own: one that fails is listed as missing and the others are still written; a full
 * volume (ENOSPC) fails the whole capture and removes its temporary directory. The cheapest and
 * most telling parts come first, should the process be killed while writing (then only a temporary
 * directory stays, removed by the next watch). A trimmed capture (the volume is short of space)
 * leaves out the heap profile, the page and the allocator's report.
 */
final class IncidentBundle {
  static final String SCHEMA = "nativemem-incident/1";
  static final String PREFIX = "nativemem-incident-";
  static final String TEMP_PREFIX = "." + PREFIX;
  static final String PROFILE = BundleLayout.PROFILE;

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

  /** The timeline's copy of the ring, made once: capturing allocates no array that size. */
  private final long[] timeline;

  private final long intervalMs;
  private final long physicalMemory;

  IncidentBundle(WatchOptions options, int ringCapacity, long physicalMemory) {
    this.profile = options.profile();
    this.timeline = new long[ringCapacity * SampleRing.COLUMNS];
    this.intervalMs = options.interval().toMillis();
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
      Parts parts = new Parts(temp);
      MemorySnapshot[] snapshot = new MemorySnapshot[1];
      HeapProfile heap = captureVerdictParts(parts, ring, trimmed, snapshot);
      Map<String, Object> manifest = manifest(pid, at, trigger, previous, basis(ring), parts);
      manifest.put("capture_ms", (System.nanoTime() - started) / 1_000_000);
      if (early) {
        Map<String, Object> first = new LinkedHashMap<>(manifest);
        List<Object> missing = new ArrayList<>(parts.missing);
        missing.add(Parts.entry("the advice and the rest of this capture", STILL_CAPTURING));
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
        captureRest(parts, heap, directory, previous, trimmed, snapshot[0]);
        // The capture's one duration: the manifest, the page and the log all show this figure.
        captureMs = (System.nanoTime() - started) / 1_000_000;
        manifest.put("capture_ms", captureMs);
        if (early) {
          parts.missing("incident page", trimmed);
        }
        parts.replaceAtomically(BundleLayout.MANIFEST, Json.writeWithNulls(manifest));
      } catch (VolumeFull e) {
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
    } catch (VolumeFull e) {
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

  /**
   * The parts the verdict reads (timeline, handles, the profile's report), with the breakdown; the
   * heap profile dumped, or null.
   */
  private HeapProfile captureVerdictParts(
      Parts parts, SampleRing ring, String trimmed, MemorySnapshot[] snapshot) {
    parts.text(
        BundleLayout.TIMELINE, "samples of the watch, oldest first", out -> timeline(ring, out));
    parts.text(
        BundleLayout.SNAPSHOT,
        "breakdown and allocator statistics",
        out -> {
          snapshot[0] = MemoryReader.snapshot();
          out.write(snapshot[0].toJson());
        });
    if (snapshot[0] != null) {
      parts.text(
          BundleLayout.BREAKDOWN_TEXT,
          "the breakdown as text",
          out -> out.write(snapshot[0].breakdown().toString()));
    }
    handles(parts, snapshot[0] == null ? null : snapshot[0].breakdown().handles());
    if (!profile) {
      parts.missing("heap profile", "the watch takes none (nativemem.watch.profile=false)");
      return null;
    }
    if (trimmed != null) {
      parts.missing("heap profile", trimmed);
      return null;
    }
    return profile(parts);
  }

  /**
   * The parts the verdict does not read; the advice from {@code snapshot} (the breakdown's own
   * reading, so that its figures are the breakdown's), or from a new reading when that failed.
   */
  private void captureRest(
      Parts parts,
      HeapProfile heap,
      DirectoryHandle directory,
      String previous,
      String trimmed,
      MemorySnapshot snapshot) {
    if (trimmed == null) {
      rawAllocatorStats(parts);
    } else {
      parts.missing("raw allocator statistics", trimmed);
    }
    List<Advice> advice = new ArrayList<>();
    boolean adviceRead =
        parts.text(
            BundleLayout.ADVICE,
            "what to change, with reasons",
            out -> {
              advice.addAll(
                  snapshot == null ? MemoryReader.advice() : MemoryReader.advice(snapshot));
              List<Object> list = new ArrayList<>();
              for (Advice a : advice) {
                list.add(Json.parseObject(a.toJson()));
              }
              Map<String, Object> json = new LinkedHashMap<>();
              json.put("schema", "nativemem-advice/1");
              json.put("advice", list);
              out.write(Json.write(json));
            });
    if (adviceRead) {
      parts.text(
          BundleLayout.ADVICE_TEXT,
          "the advice as text",
          out -> {
            for (Advice a : advice) {
              out.write(a + "\n");
            }
          });
    }
    nmt(parts);
    if (heap != null) {
      diff(parts, heap, directory, previous);
    }
  }

  /**
   * The handle report: {@code taken}, the full report the snapshot read at the same moment, or a
   * report read now when the snapshot failed.
   */
  private static void handles(Parts parts, HandleReport taken) {
    if (!NativeHandles.agentActive()) {
      parts.missing(
          "handle report",
          "the nativemem agent is not running, so no handles are tracked"
              + " (-javaagent:nativemem.jar=watch=on tracks them)");
      return;
    }
    HandleReport[] report = new HandleReport[1];
    parts.text(
        BundleLayout.HANDLES,
        "handle report: open and leaked handles per kind and site",
        out -> {
          report[0] = taken != null ? taken : NativeHandles.report();
          out.write(report[0].toJson());
        });
    if (report[0] != null) {
      parts.text(
          BundleLayout.HANDLES_TEXT,
          "the handle report as text",
          out -> out.write(report[0].toString()));
    }
  }

  private static void rawAllocatorStats(Parts parts) {
    AllocatorInfo allocator;
    try {
      allocator = MemoryReader.allocator();
    } catch (RuntimeException e) {
      parts.missing("raw allocator statistics", String.valueOf(e.getMessage()));
      return;
    }
    boolean jemalloc = allocator.isJemalloc();
    parts.text(
        jemalloc ? BundleLayout.JEMALLOC_STATS : BundleLayout.GLIBC_MALLOC_INFO,
        jemalloc ? "jemalloc's malloc_stats_print JSON" : "glibc's malloc_info XML",
        out -> out.write(MemoryReader.rawAllocatorStats()));
  }

  private static void nmt(Parts parts) {
    String[] text = new String[1];
    try {
      text[0] = NmtSummary.read() != null ? NmtSummary.run() : null;
    } catch (RuntimeException e) {
      parts.missing("NMT summary", String.valueOf(e.getMessage()));
      return;
    }
    if (text[0] == null) {
      parts.missing(
          "NMT summary", "NMT is off (-XX:NativeMemoryTracking=summary turns it on at start)");
      return;
    }
    parts.text(BundleLayout.NMT_TEXT, "the JVM's NMT summary", out -> out.write(text[0]));
  }

  /** The dump, its report, flame graph and pprof; returns the dump, or null. */
  private static HeapProfile profile(Parts parts) {
    if (!HeapProfiler.get().isAvailable()) {
      parts.missing(
          "heap profile",
          "jemalloc profiling is not available: " + HeapProfiler.get().unavailableReason());
      return null;
    }
    Path dump = parts.dir.anchored(PROFILE);
    HeapProfile[] heap = new HeapProfile[1];
    boolean dumped =
        parts.file(
            PROFILE,
            "heap profile (jeprof format), sampled allocations live now",
            () -> heap[0] = HeapProfiler.get().dump(dump));
    if (!dumped) {
      return null;
    }
    parts.add(
        BundleLayout.PROFILE_SYMBOLS, "the profile's symbols: build-ids, objects, JIT frames");
    Path flame = parts.dir.anchored(BundleLayout.PROFILE_FLAME_GRAPH);
    Path pprof = parts.dir.anchored(BundleLayout.PROFILE_PPROF);
    ProfileReport[] report = new ProfileReport[1];
    parts.text(
        BundleLayout.PROFILE_SITES,
        "the profile's top sites",
        out -> {
          report[0] =
              heap[0]
                  .request()
                  .report()
                  .write(ProfileRequest.Format.SVG, flame)
                  .write(ProfileRequest.Format.PPROF, pprof)
                  .run()
                  .report();
          out.write(report[0].toJson());
        });
    if (report[0] != null) {
      parts.add(BundleLayout.PROFILE_FLAME_GRAPH, "flame graph of the profile");
      parts.add(BundleLayout.PROFILE_PPROF, "the profile for go tool pprof");
    } else {
      parts.dir.removeTree(BundleLayout.PROFILE_FLAME_GRAPH);
      parts.dir.removeTree(BundleLayout.PROFILE_PPROF);
    }
    return heap[0];
  }

  /** Growth since this process's previous bundle, whose profile is the base. */
  private static void diff(
      Parts parts, HeapProfile heap, DirectoryHandle directory, String previous) {
    if (previous == null) {
      parts.missing("profile diff", "no previous bundle of this process");
      return;
    }
    try (DirectoryHandle before = directory.openDirectory(previous)) {
      Path base = before.anchored(PROFILE);
      // Opened without following a link; a bundle of ours (the watch directory is ours alone, and
      // its listing names only our directories), so only its profile is checked.
      if (!Files.isRegularFile(base, LinkOption.NOFOLLOW_LINKS)) {
        parts.missing("profile diff", "the previous bundle has no heap profile");
        return;
      }
      parts.text(
          BundleLayout.PROFILE_DIFF,
          "growth since the previous bundle's profile",
          out -> out.write(heap.diff(HeapProfile.open(base)).toJson()));
    } catch (RuntimeException e) {
      parts.missing("profile diff", "the previous bundle cannot be opened: " + e.getMessage());
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
      long pid, Instant at, Trigger trigger, String previous, String basis, Parts parts) {
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

  /** {@code timeline.json} streamed from a copy of the ring: no object per sample. */
  private void timeline(SampleRing ring, Writer out) throws IOException {
    int count;
    synchronized (timeline) {
      count = ring.copyOldestFirst(timeline);
      out.write("{\"schema\":\"nativemem-timeline/1\",\"interval_ms\":");
      out.write(Long.toString(intervalMs));
      out.write(",\"samples\":[");
      for (int i = 0; i < count; i++) {
        int row = i * SampleRing.COLUMNS;
        out.write(i == 0 ? "{\"t\":" : ",\n{\"t\":");
        out.write(Long.toString(timeline[row + SampleRing.TIME]));
        field(out, "limit", timeline[row + SampleRing.LIMIT]);
        field(out, "usage", timeline[row + SampleRing.USAGE]);
        field(out, "rss", timeline[row + SampleRing.RSS]);
        field(out, "allocator_allocated", timeline[row + SampleRing.ALLOCATOR_ALLOCATED]);
        field(out, "allocator_resident", timeline[row + SampleRing.ALLOCATOR_RESIDENT]);
        field(out, "heap_used", timeline[row + SampleRing.HEAP_USED]);
        field(out, "heap_committed", timeline[row + SampleRing.HEAP_COMMITTED]);
        field(out, "handles_open", timeline[row + SampleRing.HANDLES_OPEN]);
        field(out, "handles_leaked", timeline[row + SampleRing.HANDLES_LEAKED]);
        field(out, "oom", timeline[row + SampleRing.OOM]);
        field(out, "oom_kill", timeline[row + SampleRing.OOM_KILL]);
        long psi = timeline[row + SampleRing.PSI_SOME_AVG10];
        out.write(",\"psi_some_avg10\":");
        out.write(psi < 0 ? "null" : String.format(Locale.ROOT, "%.2f", psi / 100.0));
        out.write('}');
      }
    }
    out.write("]}\n");
  }

  private static void field(Writer out, String key, long value) throws IOException {
    out.write(",\"");
    out.write(key);
    out.write("\":");
    out.write(value < 0 ? "null" : Long.toString(value));
  }

  /** Writes text to a new file; may throw, and is then listed as missing. */
  interface TextWriter {
    void write(Writer out) throws Exception;
  }

  /** Makes a file by other means (a dump); may throw. */
  interface FileMaker {
    void make() throws Exception;
  }

  /** A full volume met while writing a part: the capture stops and keeps nothing. */
  static final class VolumeFull extends RuntimeException {
    private static final long serialVersionUID = 1L;

    VolumeFull(Throwable cause) {
      super(cause);
    }

    /** Whether {@code e} or a cause says the file system is full (ENOSPC, or a quota: EDQUOT). */
    static boolean isCause(Throwable e) {
      for (Throwable t = e; t != null; t = t.getCause()) {
        String m = t.getMessage();
        if (m != null && (m.contains("No space left on device") || m.contains("quota exceeded"))) {
          return true;
        }
      }
      return false;
    }
  }

  /** The files of a bundle being written (through its directory's handle), and what is missing. */
  static final class Parts {
    final DirectoryHandle dir;
    final List<Object> files = new ArrayList<>();
    final List<Object> missing = new ArrayList<>();

    Parts(DirectoryHandle dir) {
      this.dir = dir;
    }

    void add(String name, String what) {
      Map<String, Object> file = new LinkedHashMap<>();
      file.put("name", name);
      file.put("what", what);
      files.add(file);
    }

    void missing(String what, String why) {
      missing.add(entry(what, why));
    }

    static Map<String, Object> entry(String what, String why) {
      Map<String, Object> entry = new LinkedHashMap<>();
      entry.put("what", what);
      entry.put("why", why);
      return entry;
    }

    /**
     * Writes {@code name} (new, 0600, through the directory's descriptor); on failure removes it
     * and lists it as missing.
     */
    boolean text(String name, String what, TextWriter content) {
      try (Writer out = newFile(dir.anchored(name))) {
        content.write(out);
      } catch (Throwable e) { // an OutOfMemoryError in one part must not lose the others
        dir.removeTree(name);
        if (VolumeFull.isCause(e)) {
          throw new VolumeFull(e);
        }
        missing(what + " (" + name + ")", describe(e));
        return false;
      }
      add(name, what);
      return true;
    }

    boolean file(String name, String what, FileMaker maker) {
      try {
        maker.make();
      } catch (Throwable e) {
        dir.removeTree(name);
        if (VolumeFull.isCause(e)) {
          throw new VolumeFull(e);
        }
        missing(what + " (" + name + ")", describe(e));
        return false;
      }
      add(name, what);
      return true;
    }

    /**
     * Writes {@code name}, or writes it again: the new file made under a temporary name, then
     * renamed over the old one through the bundle's descriptor, so that a reader (or a kill) finds
     * the old file or the new one, never none, whether the bundle is in place yet or not.
     */
    void replaceAtomically(String name, String content) {
      try {
        dir.replace(name, content);
      } catch (RuntimeException e) {
        if (VolumeFull.isCause(e)) {
          throw new VolumeFull(e);
        }
        throw e;
      }
    }

    private static Writer newFile(Path path) throws IOException {
      return new BufferedWriter(
          new OutputStreamWriter(
              Channels.newOutputStream(
                  Files.newByteChannel(
                      path,
                      new HashSet<OpenOption>(
                          Arrays.asList(
                              StandardOpenOption.CREATE_NEW,
                              StandardOpenOption.WRITE,
                              LinkOption.NOFOLLOW_LINKS)),
                      PosixFilePermissions.asFileAttribute(
                          PosixFilePermissions.fromString("rw-------")))),
              StandardCharsets.UTF_8),
          8192);
    }

    private static String describe(Throwable e) {
      String message = e.getMessage();
      return e.getClass().getSimpleName() + (message == null ? "" : ": " + message);
    }
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
