package dev.nativemem.tests;

import dev.nativemem.NativeMemory;
import dev.nativemem.base.Advice;
import dev.nativemem.handles.HandleReport;
import dev.nativemem.handles.NativeHandles;
import dev.nativemem.memory.MemoryBreakdown;
import dev.nativemem.memory.MemorySnapshot;
import dev.nativemem.profile.HeapProfile;
import dev.nativemem.profile.HeapProfiler;
import dev.nativemem.tests.handles.SourceLine;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.zip.Inflater;

/**
 * Runs in a forked JVM with the agent: plants open Inflaters on one line while sampling a timeline,
 * then writes an incident bundle through the public API as the bundle layout says, renders its page
 * with {@link NativeMemory#incidentPage} and prints {@code PLANTED_LINE} and {@code PAGE}.
 */
public final class IncidentBundleChild {
  static final int INFLATERS = 2000;

  private static final List<Inflater> OPEN = new ArrayList<>();
  private static final List<String> SAMPLES = new ArrayList<>();
  private static final List<String> FILES = new ArrayList<>();
  private static final List<String> MISSING = new ArrayList<>();

  public static void main(String[] args) throws Exception {
    Path bundle = Paths.get(args[0]);
    Files.createDirectory(
        bundle, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
    HeapProfiler profiler = NativeMemory.profiling();
    if (profiler.isAvailable()) {
      profiler.start();
    }
    for (int i = 0; i < 3; i++) {
      sample();
    }
    int line = 0;
    for (int batch = 0; batch < 4; batch++) {
      for (int i = 0; i < INFLATERS / 4; i++) {
        line = SourceLine.here() + (OPEN.add(new Inflater()) ? 0 : 0); // the planted line
      }
      sample();
    }
    sample();
    System.out.println("PLANTED_LINE " + line);
    String captured = Instant.now().toString();
    long start = System.nanoTime();
    MemorySnapshot snapshot = NativeMemory.snapshot();
    write(bundle, "snapshot.json", snapshot.toJson(), "breakdown and allocator statistics");
    write(bundle, "breakdown.txt", snapshot.breakdown().toString(), "breakdown, text");
    HandleReport handles = NativeHandles.report();
    write(bundle, "handles.json", handles.toJson(), "handle report");
    write(bundle, "handles.txt", handles.toString(), "handle report, text");
    List<String> advice = new ArrayList<>();
    for (Advice a : NativeMemory.advice()) {
      advice.add(a.toJson());
    }
    write(
        bundle,
        "advice.json",
        "{\"schema\":\"nativemem-advice/1\",\"advice\":[" + String.join(",", advice) + "]}",
        "advice");
    write(
        bundle,
        "timeline.json",
        "{\"schema\":\"nativemem-timeline/1\",\"interval_ms\":100,\"samples\":["
            + String.join(",", SAMPLES)
            + "]}",
        "timeline");
    if (profiler.isAvailable()) {
      HeapProfile profile = NativeMemory.dumpProfile(bundle.resolve("profile.heap"));
      FILES.add(file("profile.heap", "heap profile"));
      write(bundle, "profile-report.json", profile.analyze().toJson(), "top sites");
      profile.writeFlameGraph(bundle.resolve("profile-flame.svg"));
      FILES.add(file("profile-flame.svg", "flame graph"));
    } else {
      MISSING.add(
          "{\"what\":\"heap profile\",\"why\":" + quote(profiler.unavailableReason()) + "}");
    }
    MISSING.add("{\"what\":\"profile diff\",\"why\":\"no previous bundle\"}");
    long captureMs = (System.nanoTime() - start) / 1_000_000;
    write(
        bundle,
        "manifest.json",
        "{\"schema\":\"nativemem-incident/1\",\"pid\":"
            + ProcessHandle.current().pid()
            + ",\"host\":\"test-host\",\"jvm\":"
            + quote(System.getProperty("java.vm.version"))
            + ",\"nativemem\":"
            + quote(NativeMemory.version().java())
            + ",\"captured_at\":"
            + quote(captured)
            + ",\"capture_ms\":"
            + captureMs
            + ",\"trigger\":{\"kind\":\"on-demand\",\"detail\":\"IncidentBundleChild\"},"
            + "\"previous_bundle\":null,\"files\":["
            + String.join(",", FILES)
            + "],\"missing\":["
            + String.join(",", MISSING)
            + "]}",
        null);
    System.out.println("PAGE " + NativeMemory.incidentPage(bundle));
    System.out.println("OPEN " + OPEN.size());
  }

  /** One timeline sample of real figures, every key present (null when unknown). */
  private static void sample() throws InterruptedException {
    MemorySnapshot snapshot = NativeMemory.snapshot();
    MemoryBreakdown b = snapshot.breakdown();
    long open = 0;
    long leaked = 0;
    for (HandleReport.KindCount k : b.handles().kinds()) {
      open += k.open();
      leaked += k.leaked();
    }
    SAMPLES.add(
        "{\"t\":"
            + System.currentTimeMillis()
            + ",\"limit\":"
            + b.limitBytes().orElse(null)
            + ",\"usage\":"
            + b.cgroupUsageBytes().orElse(null)
            + ",\"rss\":"
            + NativeMemory.processMemory().rssBytes()
            + ",\"allocator_allocated\":"
            + snapshot.stats().allocatedBytes()
            + ",\"allocator_resident\":"
            + b.allocatorResidentBytes().orElse(null)
            + ",\"heap_used\":"
            + (Runtime.getRuntime().totalMemory() - Runtime.getRuntime().freeMemory())
            + ",\"heap_committed\":"
            + b.heapCommittedBytes()
            + ",\"handles_open\":"
            + open
            + ",\"handles_leaked\":"
            + leaked
            + ",\"psi_some_avg10\":null}");
    Thread.sleep(MemorySnapshot.MAX_AGE.toMillis() + 20);
  }

  private static void write(Path bundle, String name, String text, String what) throws Exception {
    Files.write(
        Files.createFile(
            bundle.resolve(name),
            PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------"))),
        text.getBytes(StandardCharsets.UTF_8));
    if (what != null) {
      FILES.add(file(name, what));
    }
  }

  private static String file(String name, String what) {
    return "{\"name\":" + quote(name) + ",\"what\":" + quote(what) + "}";
  }

  private static String quote(String text) {
    return "\"" + text.replace("\\", "\\\\").replace("\"", "\\\"") + "\"";
  }
}
