package dev.nativemem.memory;

import dev.nativemem.internal.JsonBinding;
import java.util.Locale;
import java.util.Optional;

/**
 * Which allocator serves this process's {@code malloc}: a jemalloc (found through the process's own
 * {@code mallctl}, living in the same object as {@code malloc}) or glibc.
 */
public final class AllocatorInfo {
  /** The allocator families nativemem tells apart. */
  public enum Kind {
    JEMALLOC,
    GLIBC
  }

  private Kind kind;
  private String version;
  private String mallocObject;
  private JemallocConfig jemalloc;

  /** Bound by {@link JsonBinding}: the fields are the keys of the native library's JSON. */
  private AllocatorInfo() {}

  /** jemalloc's configuration; empty when glibc serves {@code malloc}. */
  public Optional<JemallocConfig> jemallocConfig() {
    return Optional.ofNullable(jemalloc);
  }

  public Kind kind() {
    return kind;
  }

  /** jemalloc's {@code version} string, or glibc's version. */
  public String version() {
    return version;
  }

  /** Path of the shared object that defines {@code malloc} in this process. */
  public String mallocObject() {
    return mallocObject;
  }

  public boolean isJemalloc() {
    return kind == Kind.JEMALLOC;
  }

  public String toJson() {
    return JsonBinding.write(this);
  }

  @Override
  public String toString() {
    return kind.name().toLowerCase(Locale.ROOT)
        + " "
        + version
        + " ("
        + mallocObject
        + ")"
        + (jemalloc == null ? "" : "; " + jemalloc);
  }

  /**
   * How the process's jemalloc is configured, read through its own {@code mallctl}: what was
   * compiled in ({@code config.*}), chosen at start ({@code opt.*}) and set now.
   *
   * <p>{@code lg_prof_sample} and {@code page_bytes} have no accessor: {@link #toJson()} passes
   * them on.
   */
  public static final class JemallocConfig {
    private boolean configProf;
    private boolean configStats;
    private int optNarenas;
    private int arenasNarenas;
    private Boolean optProf;
    private Boolean profActive;
    private Long lgProfSample;
    private boolean backgroundThread;
    private long dirtyDecayMs;
    private long muzzyDecayMs;
    private boolean tcache;
    private long pageBytes;

    /** Bound by {@link JsonBinding}: the fields are the keys of the native library's JSON. */
    private JemallocConfig() {}

    /** {@code config.prof}: heap profiling compiled in. */
    public boolean profilingCompiledIn() {
      return configProf;
    }

    /** {@code config.stats}: statistics compiled in. */
    public boolean statsCompiledIn() {
      return configStats;
    }

    /** {@code opt.narenas}: the arena limit chosen at start (4 × CPUs unless configured). */
    public int optNarenas() {
      return optNarenas;
    }

    /** {@code arenas.narenas}: arenas that exist now. */
    public int narenas() {
      return arenasNarenas;
    }

    /** {@code opt.prof}: profiling enabled at start; empty when not compiled in. */
    public Optional<Boolean> profilingEnabled() {
      return Optional.ofNullable(optProf);
    }

    /** {@code prof.active}: sampling now; empty when not compiled in. */
    public Optional<Boolean> profilingActive() {
      return Optional.ofNullable(profActive);
    }

    /** {@code background_thread}: background purging threads on now. */
    public boolean backgroundThread() {
      return backgroundThread;
    }

    /** {@code arenas.dirty_decay_ms}: -1 means dirty pages are never purged. */
    public long dirtyDecayMs() {
      return dirtyDecayMs;
    }

    /** {@code arenas.muzzy_decay_ms}. */
    public long muzzyDecayMs() {
      return muzzyDecayMs;
    }

    /** {@code opt.tcache}: thread caches enabled. */
    public boolean threadCache() {
      return tcache;
    }

    public String toJson() {
      return JsonBinding.write(this);
    }

    @Override
    public String toString() {
      return "narenas "
          + arenasNarenas
          + " (opt.narenas "
          + optNarenas
          + "), prof "
          + profilingEnabled().map(String::valueOf).orElse("not compiled in")
          + profilingActive().map(a -> a ? " (active)" : " (inactive)").orElse("")
          + ", background_thread "
          + backgroundThread
          + ", dirty_decay_ms "
          + dirtyDecayMs
          + ", muzzy_decay_ms "
          + muzzyDecayMs
          + ", tcache "
          + tcache
          + ", stats "
          + (configStats ? "compiled in" : "not compiled in");
    }
  }
}
