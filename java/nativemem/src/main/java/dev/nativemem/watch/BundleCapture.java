package dev.nativemem.watch;

import dev.nativemem.base.Advice;
import dev.nativemem.handles.HandleReport;
import dev.nativemem.handles.NativeHandles;
import dev.nativemem.incident.layout.BundleLayout;
import dev.nativemem.internal.DirectoryHandle;
import dev.nativemem.internal.Json;
import dev.nativemem.internal.NativeBridge;
import dev.nativemem.memory.AllocatorInfo;
import dev.nativemem.memory.MemoryReader;
import dev.nativemem.memory.MemorySnapshot;
import dev.nativemem.memory.reading.NmtSummary;
import dev.nativemem.profile.HeapProfile;
import dev.nativemem.profile.HeapProfiler;
import dev.nativemem.profile.ProfileReport;
import dev.nativemem.profile.ProfileRequest;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * What each part of one bundle is read from, in the order the bundle takes them: first the parts
 * the verdict reads (the timeline, the snapshot and its breakdown, the handle report, the heap
 * profile and its report), then the rest (the allocator's own report, the advice, NMT, the growth
 * since the previous bundle). One reading serves the breakdown, the handles and the advice, so that
 * their figures agree.
 */
final class BundleCapture {
  private final BundleParts parts;

  /** The reading the breakdown, the handle report and the advice share; null if it failed. */
  private MemorySnapshot snapshot;

  /** The heap profile dumped into the bundle, or null. */
  private HeapProfile heap;

  BundleCapture(BundleParts parts) {
    this.parts = parts;
  }

  /**
   * The parts the verdict reads, with the breakdown; the heap profile only when {@code profile} and
   * the capture is not {@code trimmed} (why it is, or null).
   */
  void verdictParts(BundleTimeline timeline, SampleRing ring, boolean profile, String trimmed) {
    parts.text(
        BundleLayout.TIMELINE,
        "samples of the watch, oldest first",
        out -> timeline.write(ring, out));
    snapshot =
        parts.text(
            BundleLayout.SNAPSHOT,
            "breakdown and allocator statistics",
            MemoryReader::snapshot,
            MemorySnapshot::toJson);
    if (snapshot != null) {
      parts.text(
          BundleLayout.BREAKDOWN_TEXT,
          "the breakdown as text",
          out -> out.write(snapshot.breakdown().toString()));
    }
    handles(snapshot == null ? null : snapshot.breakdown().handles());
    if (!profile) {
      parts.missing("heap profile", "the watch takes none (nativemem.watch.profile=false)");
    } else if (trimmed != null) {
      parts.missing("heap profile", trimmed);
    } else {
      heap = profile();
      giveBackFreedMemory();
    }
  }

  /**
   * The parts the verdict does not read; the advice from the snapshot (so that its figures are the
   * breakdown's), or from a new reading when that failed; the diff against {@code previous}, this
   * process's previous bundle in {@code directory}, or null.
   */
  void rest(DirectoryHandle directory, String previous, String trimmed) {
    if (trimmed == null) {
      rawAllocatorStats();
    } else {
      parts.missing("raw allocator statistics", trimmed);
    }
    List<Advice> advice =
        parts.text(
            BundleLayout.ADVICE,
            "what to change, with reasons",
            () -> snapshot == null ? MemoryReader.advice() : MemoryReader.advice(snapshot),
            BundleCapture::adviceJson);
    if (advice != null) {
      parts.text(
          BundleLayout.ADVICE_TEXT,
          "the advice as text",
          out -> {
            for (Advice a : advice) {
              out.write(a + "\n");
            }
          });
    }
    nmt();
    if (heap != null) {
      diff(directory, previous);
      giveBackFreedMemory();
    }
  }

  /**
   * The profile's analysis reads symbol tables (tens of MiB for libjvm.so) on the capture's thread,
   * and glibc keeps what that thread's arena freed resident: near the limit, a capture took 40 MiB
   * for good. {@code malloc_trim(0)} gives them back (2 to 5 ms, one arena locked at a time);
   * jemalloc returns freed pages by itself.
   */
  private static void giveBackFreedMemory() {
    try {
      if (MemoryReader.allocator().kind() == AllocatorInfo.Kind.GLIBC) {
        NativeBridge.call("trim");
      }
    } catch (RuntimeException e) {
      // An extra: the bundle is whole without it.
    }
  }

  private static String adviceJson(List<Advice> advice) {
    List<Object> list = new ArrayList<>();
    for (Advice a : advice) {
      list.add(Json.parseObject(a.toJson()));
    }
    Map<String, Object> json = new LinkedHashMap<>();
    json.put("schema", "nativemem-advice/1");
    json.put("advice", list);
    return Json.write(json);
  }

  /**
   * The handle report: {@code taken}, the full report the snapshot read at the same moment, or a
   * report read now when the snapshot failed.
   */
  private void handles(HandleReport taken) {
    if (!NativeHandles.agentActive()) {
      parts.missing(
          "handle report",
          "the nativemem agent is not running, so no handles are tracked"
              + " (-javaagent:nativemem.jar=watch=on tracks them)");
      return;
    }
    HandleReport report =
        parts.text(
            BundleLayout.HANDLES,
            "handle report: open and leaked handles per kind and site",
            () -> taken != null ? taken : NativeHandles.report(),
            HandleReport::toJson);
    if (report != null) {
      parts.text(
          BundleLayout.HANDLES_TEXT,
          "the handle report as text",
          out -> out.write(report.toString()));
    }
  }

  private void rawAllocatorStats() {
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

  private void nmt() {
    String text;
    try {
      text = NmtSummary.read() != null ? NmtSummary.run() : null;
    } catch (RuntimeException e) {
      parts.missing("NMT summary", String.valueOf(e.getMessage()));
      return;
    }
    if (text == null) {
      parts.missing(
          "NMT summary", "NMT is off (-XX:NativeMemoryTracking=summary turns it on at start)");
      return;
    }
    parts.text(BundleLayout.NMT_TEXT, "the JVM's NMT summary", out -> out.write(text));
  }

  /** The dump, its report, flame graph and pprof; returns the dump, or null. */
  private HeapProfile profile() {
    if (!HeapProfiler.get().isAvailable()) {
      parts.missing(
          "heap profile",
          "heap profiling cannot run here: " + HeapProfiler.get().unavailableReason());
      return null;
    }
    Path dump = parts.dir.anchored(BundleLayout.PROFILE);
    HeapProfile dumped =
        parts.made(
            BundleLayout.PROFILE,
            "heap profile (jeprof format), sampled allocations live now",
            () -> HeapProfiler.get().dump(dump));
    if (dumped == null) {
      return null;
    }
    parts.add(
        BundleLayout.PROFILE_SYMBOLS, "the profile's symbols: build-ids, objects, JIT frames");
    Path flame = parts.dir.anchored(BundleLayout.PROFILE_FLAME_GRAPH);
    Path pprof = parts.dir.anchored(BundleLayout.PROFILE_PPROF);
    ProfileReport report =
        parts.text(
            BundleLayout.PROFILE_SITES,
            "the profile's top sites",
            () ->
                dumped
                    .request()
                    .report()
                    .write(ProfileRequest.Format.SVG, flame)
                    .write(ProfileRequest.Format.PPROF, pprof)
                    .run()
                    .report(),
            ProfileReport::toJson);
    if (report != null) {
      parts.add(BundleLayout.PROFILE_FLAME_GRAPH, "flame graph of the profile");
      parts.add(BundleLayout.PROFILE_PPROF, "the profile for go tool pprof");
    } else {
      parts.dir.removeTree(BundleLayout.PROFILE_FLAME_GRAPH);
      parts.dir.removeTree(BundleLayout.PROFILE_PPROF);
    }
    return dumped;
  }

  /** Growth since this process's previous bundle, whose profile is the base. */
  private void diff(DirectoryHandle directory, String previous) {
    if (previous == null) {
      parts.missing("profile diff", "no previous bundle of this process");
      return;
    }
    try (DirectoryHandle before = directory.openDirectory(previous)) {
      Path base = before.anchored(BundleLayout.PROFILE);
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
}
