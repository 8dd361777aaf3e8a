package dev.nativemem.profile;

import dev.nativemem.base.NativeMemoryException;
import dev.nativemem.internal.Json;
import dev.nativemem.internal.JsonBinding;
import dev.nativemem.internal.NativeBridge;
import dev.nativemem.internal.NativeLibraryLoader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;

/**
 * Everything wanted from one heap profile (or many merged, {@link #merge}) at once: the top sites,
 * files in any {@link Format}, and text outputs, all made from one read and one symbolization of
 * each dump (and of each base dump), streamed so memory grows with distinct stacks, not dumps. The
 * methods of {@link HeapProfile} are each one request; ask for several outputs here instead.
 *
 * <pre>{@code
 * ProfileRequest.Result result =
 *     ProfileRequest.of(Path.of("/tmp/app.heap"))
 *         .report()
 *         .write(ProfileRequest.Format.SVG, Path.of("/tmp/app.svg"))
 *         .write(ProfileRequest.Format.PPROF, Path.of("/tmp/app.pb.gz"))
 *         .run();
 * System.out.println(result.report());
 * }</pre>
 *
 * <p>Not thread-safe; a request may be run again (it reads the dumps again).
 */
public final class ProfileRequest {
  /** How an analysis is rendered. */
  public enum Format {
    /** Top sites, flat and cumulative, in jeprof's columns. */
    TEXT,
    /** {@code root;...;leaf bytes} lines ({@code stack base current} for a difference). */
    COLLAPSED,
    /** Flame graph SVG (red grew, blue shrank for a difference): files only. */
    SVG,
    /** Gzipped pprof protobuf ({@code go tool pprof}, Pyroscope): files only. */
    PPROF;

    /** Too large or binary to return as a string: written to a file only. */
    public boolean fileOnly() {
      return this == SVG || this == PPROF;
    }

    String wireName() {
      return name().toLowerCase(Locale.ROOT);
    }
  }

  private final List<String> dumps;
  private final List<String> bases = new ArrayList<>();
  private int top = HeapProfile.DEFAULT_TOP;
  private boolean report;
  private boolean byProcess;
  private final List<Map<String, Object>> outputs = new ArrayList<>();
  private final List<Format> rendered = new ArrayList<>();

  private ProfileRequest(List<String> dumps) {
    this.dumps = dumps;
  }

  /**
   * A request about {@code dump}.
   *
   * @throws NativeMemoryException if there is no such file
   */
  public static ProfileRequest of(Path dump) {
    return new ProfileRequest(new ArrayList<>(List.of(existing(dump).toString())));
  }

  /**
   * A request about many dumps (from many processes of a fleet) merged into one profile: each names
   * a dump file, a directory (its {@code *.heap} files and incident bundles), a glob pattern such
   * as {@code /var/dumps/tm-*.heap}, or an incident bundle. Each dump is symbolized with its own
   * sidecar and unbiased with its own sample interval; stacks are merged by function names and each
   * site tells in how many processes it is. A dump that is not a jemalloc heap_v2 profile, or is
   * truncated or damaged, is passed over with a warning naming it. For example the top sites of
   * forty TaskManagers, each told "in 37 of 40 processes": {@code
   * ProfileRequest.merge(List.of(Path.of("/var/dumps"))).report().run().report()}.
   *
   * @throws IllegalArgumentException if {@code dumps} is empty
   */
  public static ProfileRequest merge(Collection<Path> dumps) {
    return new ProfileRequest(paths(dumps, "dumps"));
  }

  /**
   * Shows every output as the growth since {@code base}, an earlier dump (like {@code jeprof
   * --base}).
   *
   * @throws NativeMemoryException if there is no such file
   */
  public ProfileRequest base(Path base) {
    bases.clear();
    bases.add(existing(base).toString());
    return this;
  }

  /**
   * Shows every output as the growth since a group of earlier dumps, named as in {@link #merge}:
   * the per-process average of this request's dumps minus that of {@code bases} ("what grew across
   * the fleet between 10:00 and 11:00").
   *
   * @throws IllegalArgumentException if {@code bases} is empty
   */
  public ProfileRequest bases(Collection<Path> bases) {
    List<String> named = paths(bases, "bases");
    this.bases.clear();
    this.bases.addAll(named);
    return this;
  }

  /** Asks the report for each process's total and its part of the top site. */
  public ProfileRequest byProcess() {
    this.byProcess = true;
    return this;
  }

  /**
   * Sites listed by the report and the text output ({@value HeapProfile#DEFAULT_TOP} unless set).
   */
  public ProfileRequest top(int top) {
    if (top <= 0) {
      throw new IllegalArgumentException("top must be positive, got " + top);
    }
    this.top = top;
    return this;
  }

  /** Asks for the top sites as a {@link ProfileReport}: {@link Result#report()}. */
  public ProfileRequest report() {
    this.report = true;
    return this;
  }

  /**
   * Writes the analysis in {@code format} to a new file {@code out} (0600, never replacing one).
   */
  public ProfileRequest write(Format format, Path out) {
    Objects.requireNonNull(format, "format");
    Objects.requireNonNull(out, "out");
    Map<String, Object> output = new LinkedHashMap<>();
    output.put("format", format.wireName());
    output.put("path", out.toAbsolutePath().toString());
    outputs.add(output);
    return this;
  }

  /**
   * Returns the analysis in {@code format} as a string: {@link Result#rendered(Format)}.
   *
   * @throws IllegalArgumentException for a {@linkplain Format#fileOnly() file-only} format
   */
  public ProfileRequest render(Format format) {
    Objects.requireNonNull(format, "format");
    if (format.fileOnly()) {
      throw new IllegalArgumentException(
          format + " is binary or large: write it to a file with write(" + format + ", path)");
    }
    if (!rendered.contains(format)) {
      rendered.add(format);
      Map<String, Object> output = new LinkedHashMap<>();
      output.put("format", format.wireName());
      outputs.add(output);
    }
    return this;
  }

  /**
   * Analyses the dump once and makes every output asked for; files are written in the order asked.
   *
   * @throws IllegalArgumentException if a dump is not a jemalloc heap_v2 profile, or an output's
   *     directory is one that other users could swap files in
   * @throws NativeMemoryException if a dump cannot be read or an output file exists or cannot be
   *     written
   */
  public Result run() {
    Map<String, Object> request = new LinkedHashMap<>();
    request.put("dumps", dumps);
    request.put("bases", bases);
    request.put("top", top);
    request.put("report", report);
    request.put("by_process", byProcess);
    request.put("outputs", outputs);
    NativeLibraryLoader.load();
    return new Result(Json.parseObject(NativeBridge.call("profile_request", request)), rendered);
  }

  /** Absolute paths (patterns kept as written, made absolute) of a non-empty collection. */
  private static List<String> paths(Collection<Path> paths, String what) {
    Objects.requireNonNull(paths, what);
    if (paths.isEmpty()) {
      throw new IllegalArgumentException(
          "no " + what + " named: give dump files, directories or patterns");
    }
    List<String> named = new ArrayList<>();
    for (Path path : paths) {
      named.add(Objects.requireNonNull(path, what).toAbsolutePath().toString());
    }
    return named;
  }

  /** The absolute path of an existing dump; the one place that says what to do without one. */
  static Path existing(Path dump) {
    Objects.requireNonNull(dump, "dump");
    Path absolute = dump.toAbsolutePath();
    if (!Files.isRegularFile(absolute)) {
      throw new NativeMemoryException(
          "heap profile "
              + absolute
              + " does not exist or is not a file; write one with NativeMemory.dumpProfile() or"
              + " 'java -jar nativemem.jar attach <pid> dump'");
    }
    return absolute;
  }

  /** What a run returned. */
  public static final class Result {
    private final ProfileReport report;
    private final Map<Format, String> rendered = new EnumMap<>(Format.class);

    @SuppressWarnings("unchecked")
    private Result(Map<String, Object> json, List<Format> formats) {
      Object report = json.get("report");
      this.report =
          report == null
              ? null
              : JsonBinding.read(ProfileReport.class, (Map<String, Object>) report);
      List<Object> texts = (List<Object>) json.get("rendered");
      for (int i = 0; i < formats.size(); i++) {
        rendered.put(formats.get(i), (String) texts.get(i));
      }
    }

    /**
     * The top sites.
     *
     * @throws IllegalStateException if the request did not ask for them ({@link #report()})
     */
    public ProfileReport report() {
      if (report == null) {
        throw new IllegalStateException("the request did not ask for the report: call report()");
      }
      return report;
    }

    /**
     * The analysis in {@code format}.
     *
     * @throws IllegalStateException if the request did not ask for it ({@link #render(Format)})
     */
    public String rendered(Format format) {
      String text = rendered.get(format);
      if (text == null) {
        throw new IllegalStateException(
            "the request did not render " + format + ": call render(" + format + ")");
      }
      return text;
    }
  }
}
