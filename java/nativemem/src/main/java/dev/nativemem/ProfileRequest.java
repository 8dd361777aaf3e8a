package dev.nativemem;

import dev.nativemem.internal.Json;
import dev.nativemem.internal.NativeBridge;
import dev.nativemem.internal.NativeLibraryLoader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;

/**
 * Everything wanted from one heap profile at once: the top sites, files in any {@link Format}, and
 * text outputs, all made from one parse and one symbolization of the dump (and of the base dump).
 * The methods of {@link HeapProfile} are each one request; ask for several outputs here instead.
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

  private final Path dump;
  private Path base;
  private int top = HeapProfile.DEFAULT_TOP;
  private boolean report;
  private final List<Map<String, Object>> outputs = new ArrayList<>();
  private final List<Format> rendered = new ArrayList<>();

  private ProfileRequest(Path dump) {
    this.dump = dump;
  }

  /**
   * A request about {@code dump}.
   *
   * @throws NativeMemoryException if there is no such file
   */
  public static ProfileRequest of(Path dump) {
    return new ProfileRequest(existing(dump));
  }

  /**
   * Shows every output as the growth since {@code base}, an earlier dump (like {@code jeprof
   * --base}).
   *
   * @throws NativeMemoryException if there is no such file
   */
  public ProfileRequest base(Path base) {
    this.base = existing(base);
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
    request.put("dump", dump.toString());
    request.put("base", base == null ? null : base.toString());
    request.put("top", top);
    request.put("report", report);
    request.put("outputs", outputs);
    NativeLibraryLoader.load();
    return new Result(
        Json.parseObject(NativeBridge.profileRequestJson(Json.write(request))),
        base != null,
        rendered);
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
              + " the 'prof.dump' mallctl");
    }
    return absolute;
  }

  /** What a run returned. */
  public static final class Result {
    private final ProfileReport report;
    private final Map<Format, String> rendered = new EnumMap<>(Format.class);

    @SuppressWarnings("unchecked")
    private Result(Map<String, Object> json, boolean difference, List<Format> formats) {
      Object report = json.get("report");
      this.report =
          report == null ? null : new ProfileReport((Map<String, Object>) report, difference);
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
