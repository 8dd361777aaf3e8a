package dev.nativemem.profile;

import dev.nativemem.base.NativeMemoryException;
import dev.nativemem.internal.ByteFormat;
import dev.nativemem.internal.Json;
import dev.nativemem.internal.JsonBinding;
import dev.nativemem.internal.NativeBridge;
import dev.nativemem.internal.NativeLibraryLoader;
import java.io.IOException;
import java.lang.invoke.VarHandle;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;

/**
 * A jemalloc heap profile ({@code heap_v2} dump) on disk, analysed without jeprof: top sites, flame
 * graph, pprof, collapsed stacks, and the growth since an earlier dump.
 *
 * <p>Figures are unbiased for sampling exactly as jeprof does, and frames are named through the
 * dump's own memory map and the {@code <dump>.symbols/} sidecar when the dump writer left one
 * (saved copies of deleted libraries, the JVM perf map for JIT-compiled methods).
 *
 * <pre>{@code
 * HeapProfile now = HeapProfile.open(Path.of("/tmp/app.heap"));
 * System.out.println(now.analyze());                      // top sites
 * now.writeFlameGraph(Path.of("/tmp/app.svg"));
 * ProfileReport growth = now.diff(HeapProfile.open(Path.of("/tmp/app-before.heap")));
 * }</pre>
 *
 * <p>Each of these methods analyses the dump again; {@link #request()} makes several outputs from
 * one analysis.
 */
public final class HeapProfile {
  /** Sites listed by {@link #analyze()}. */
  public static final int DEFAULT_TOP = 20;

  private transient Path path;
  private transient Instant time;
  private long sampleIntervalBytes;
  private long sampledBytes;
  private long sampledObjects;
  private long inUseBytes;
  private long inUseObjects;
  private long stackCount;
  private Long dumpTimeMs;

  /**
   * Bound by {@link JsonBinding}: the fields are the keys of the native library's summary of the
   * dump; the file and its time are the profile's own.
   */
  private HeapProfile() {}

  /**
   * The profile of the dump at {@code path}, from the native library's summary of it. It was taken
   * when the summary's {@code dump_time_ms} says (from the dump's {@code .symbols/symbols.json}
   * sidecar, read by the native side, bounded and never from a FIFO or link), else at the dump's
   * mtime.
   */
  static HeapProfile of(Path path, Map<String, Object> summary) {
    HeapProfile profile = JsonBinding.read(HeapProfile.class, summary);
    profile.path = path;
    profile.time =
        profile.dumpTimeMs != null ? Instant.ofEpochMilli(profile.dumpTimeMs) : modified(path);
    VarHandle.releaseFence(); // publishes these two as the binding's fence does the keys
    return profile;
  }

  /**
   * Opens and checks a dump.
   *
   * @throws NullPointerException if {@code dump} is null
   * @throws NativeMemoryException if the file cannot be read
   * @throws IllegalArgumentException if the file is not a jemalloc heap_v2 dump
   */
  public static HeapProfile open(Path dump) {
    Path absolute = ProfileRequest.existing(dump);
    NativeLibraryLoader.load();
    Map<String, Object> summary =
        Json.parseObject(NativeBridge.call("profile_summary", Map.of("dump", absolute.toString())));
    return of(absolute, summary);
  }

  /**
   * The profile the library's dump just wrote ({@code NativeMemory.dumpProfile}), from the dump's
   * own answer: its path and summary, so nothing is read again.
   */
  static HeapProfile dumped(Map<String, Object> dumped) {
    return of(Paths.get(Json.string(dumped, "path")), dumped);
  }

  /** The dump file. */
  public Path path() {
    return path;
  }

  /** When the dump was written (the file's modification time). */
  public Instant time() {
    return time;
  }

  /** Mean bytes between samples ({@code 2^lg_prof_sample}). */
  public long sampleIntervalBytes() {
    return sampleIntervalBytes;
  }

  /**
   * The sampled in-use bytes the dump's header totals: biased towards large allocations, far below
   * the real figure; {@link #inUseBytes()} is the estimate to show.
   */
  public long sampledBytes() {
    return sampledBytes;
  }

  /** The sampled in-use objects the dump's header totals (biased, see {@link #sampledBytes()}). */
  public long sampledObjects() {
    return sampledObjects;
  }

  /**
   * In-use bytes estimated from the samples, unbiased per stack as jeprof does: the total {@link
   * #analyze()} reports.
   */
  public long inUseBytes() {
    return inUseBytes;
  }

  /** In-use objects estimated from the samples, as {@link #analyze()} totals them. */
  public long inUseObjects() {
    return inUseObjects;
  }

  /** Distinct allocation stacks in the dump. */
  public long stackCount() {
    return stackCount;
  }

  /**
   * A request for several outputs from one analysis of this dump; each method below is one request
   * and reads the dump again.
   */
  public ProfileRequest request() {
    return ProfileRequest.of(path);
  }

  /** The {@value #DEFAULT_TOP} top sites, flat and cumulative. */
  public ProfileReport analyze() {
    return analyze(DEFAULT_TOP);
  }

  /** The {@code top} top sites, flat and cumulative. */
  public ProfileReport analyze(int top) {
    return request().top(top).report().run().report();
  }

  /** Growth by site since {@code base} (an earlier dump), like {@code jeprof --base}. */
  public ProfileReport diff(HeapProfile base) {
    return diff(base, DEFAULT_TOP);
  }

  /** Growth by site since {@code base}, {@code top} sites each way. */
  public ProfileReport diff(HeapProfile base, int top) {
    return since(base).top(top).report().run().report();
  }

  /** Writes a flame graph SVG of the in-use bytes to a new file. */
  public void writeFlameGraph(Path out) {
    request().write(ProfileRequest.Format.SVG, out).run();
  }

  /** Writes a differential flame graph (red grew, blue shrank since {@code base}). */
  public void writeFlameGraph(HeapProfile base, Path out) {
    since(base).write(ProfileRequest.Format.SVG, out).run();
  }

  /** Writes a gzipped pprof profile ({@code go tool pprof}, Pyroscope) to a new file. */
  public void writePprof(Path out) {
    request().write(ProfileRequest.Format.PPROF, out).run();
  }

  /** Writes collapsed stacks ({@code root;...;leaf bytes}) to a new file. */
  public void writeCollapsed(Path out) {
    request().write(ProfileRequest.Format.COLLAPSED, out).run();
  }

  /** The top sites as text in jeprof's columns. */
  public String toText(int top) {
    ProfileRequest.Format text = ProfileRequest.Format.TEXT;
    return request().top(top).render(text).run().rendered(text);
  }

  private ProfileRequest since(HeapProfile base) {
    return request().base(Objects.requireNonNull(base, "base").path);
  }

  /** The dump's {@code path} and {@code time}, then the keys of its summary. */
  public String toJson() {
    Map<String, Object> json = new LinkedHashMap<>();
    json.put("path", path.toString());
    json.put("time", time.toString());
    json.putAll(JsonBinding.toMap(this));
    return Json.writeWithNulls(json);
  }

  @Override
  public String toString() {
    return "heap profile "
        + path
        + " at "
        + time
        + ": "
        + ByteFormat.human(inUseBytes)
        + " in use ("
        + inUseObjects
        + " objects, estimated from samples) in "
        + stackCount
        + " stacks, sampled every "
        + ByteFormat.human(sampleIntervalBytes);
  }

  private static Instant modified(Path dump) {
    try {
      return Files.getLastModifiedTime(dump).toInstant();
    } catch (IOException e) {
      throw new NativeMemoryException("cannot read heap profile " + dump + ": " + e, e);
    }
  }
}
