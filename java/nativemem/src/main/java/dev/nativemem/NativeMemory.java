package dev.nativemem;

import dev.nativemem.base.Advice;
import dev.nativemem.base.NativeMemoryException;
import dev.nativemem.base.Setting;
import dev.nativemem.internal.AppLog;
import dev.nativemem.internal.ByteFormat;
import dev.nativemem.internal.Json;
import dev.nativemem.internal.JsonBinding;
import dev.nativemem.internal.NativeBridge;
import dev.nativemem.internal.NativeLibraryLoader;
import dev.nativemem.memory.AllocatorInfo;
import dev.nativemem.memory.AllocatorStats;
import dev.nativemem.memory.MemoryBreakdown;
import dev.nativemem.memory.MemoryReader;
import dev.nativemem.memory.MemorySnapshot;
import dev.nativemem.memory.ProcessMemory;
import dev.nativemem.profile.HeapProfile;
import dev.nativemem.profile.HeapProfiler;
import dev.nativemem.profile.sampling.JavaFramesSetting;
import dev.nativemem.watch.starting.WatchStart;
import java.nio.file.Path;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * The entry point: what this JVM's native memory is made of, from inside the JVM.
 *
 * <p>The first call loads {@code libnativemem.so} from the jar (or from {@code
 * -Dnativemem.library.path}). Every method is thread-safe and returns an immutable snapshot.
 *
 * <pre>{@code
 * AllocatorInfo allocator = NativeMemory.allocator();
 * ProcessMemory process = NativeMemory.processMemory();
 * System.out.println(allocator + ", " + process);
 * }</pre>
 */
public final class NativeMemory {
  private NativeMemory() {}

  /**
   * The Java and native versions.
   *
   * @throws NativeMemoryException if the native library is not the version of these classes (a
   *     stale {@code -Dnativemem.library.path}, for example); every call throws it, from the first
   *     on, since the library is checked when it loads
   */
  public static Versions version() {
    NativeLibraryLoader.load(); // refuses a native library of another version
    return new Versions(
        NativeLibraryLoader.javaVersion(),
        NativeBridge.version(),
        NativeLibraryLoader.loadedPath().toString());
  }

  /** Which allocator serves this process's {@code malloc}. */
  public static AllocatorInfo allocator() {
    return MemoryReader.allocator();
  }

  /** Resident memory of this process, from {@code /proc/self/status}. */
  public static ProcessMemory processMemory() {
    return MemoryReader.processMemory();
  }

  /**
   * Reads one integer or boolean {@code mallctl} key of the process's jemalloc, for example {@code
   * "opt.narenas"} or {@code "config.prof"} (booleans read as 0 or 1). Statistics under {@code
   * stats.} are as of the last {@code epoch} advance.
   *
   * <p>Only pure reads of integers and booleans are accepted ({@code config.*}, {@code opt.*},
   * {@code stats.*}, {@code epoch}, {@code prof.*} settings, {@code arenas.*} sizes...): jemalloc
   * acts on a read of some keys ({@code arenas.create}) and answers others with a pointer.
   *
   * @throws IllegalArgumentException for any other key, saying why
   * @throws NativeMemoryException if glibc serves {@code malloc} (the message names the {@code
   *     LD_PRELOAD} to use), or jemalloc does not know the key
   */
  public static long mallctl(String key) {
    return MemoryReader.mallctl(key);
  }

  /**
   * Statistics of the allocator that serves {@code malloc}: jemalloc's after advancing {@code
   * epoch}, or glibc's {@code mallinfo2}, labelled by kind.
   */
  public static AllocatorStats stats() {
    return MemoryReader.stats();
  }

  /**
   * The allocator's own statistics as it writes them, for bug reports: jemalloc's {@code
   * malloc_stats_print} JSON, or glibc's {@code malloc_info} XML (see {@link #allocator()} for
   * which). {@link #stats()} has the same figures parsed. {@code stats --raw} in the CLI.
   */
  public static String rawAllocatorStats() {
    return MemoryReader.rawAllocatorStats();
  }

  /**
   * The container's memory limit and usage, the process's RSS, the JVM's heap, pools, buffers and
   * NMT, and the allocator, with RSS split into attributed parts and the unaccounted remainder; the
   * heap and code cache counted by their resident pages ({@link MemoryBreakdown.View#RESIDENT}).
   */
  public static MemoryBreakdown breakdown() {
    return breakdown(MemoryBreakdown.View.RESIDENT);
  }

  /** The breakdown with JVM memory counted as {@code view} says. */
  public static MemoryBreakdown breakdown(MemoryBreakdown.View view) {
    return MemoryReader.breakdown(view);
  }

  /**
   * The breakdown and the allocator's statistics read together, shared by callers within {@link
   * MemorySnapshot#MAX_AGE}: what the MXBean, metrics and watches read, so that polling many
   * figures costs one reading.
   */
  public static MemorySnapshot snapshot() {
    return MemoryReader.snapshot();
  }

  /** What to change, with reasons: arenas sized for the host, decay, NMT, profiling, headroom. */
  public static java.util.List<Advice> advice() {
    return MemoryReader.advice();
  }

  /**
   * Purges every unused dirty page of every jemalloc arena now: what the allocator holds beyond
   * what is allocated goes back to the kernel. glibc's counterpart is {@link #trim()}.
   *
   * @throws NativeMemoryException under glibc; the message names the {@code LD_PRELOAD} to use
   */
  public static RemedyResult purge() {
    return remedy("purge", null);
  }

  /**
   * Sets jemalloc's dirty and muzzy decay times for every existing arena and as the default for new
   * ones. {@code -1} never purges; {@code 0} purges at once.
   *
   * @throws IllegalArgumentException if a value is below -1 or above jemalloc's maximum
   * @throws NativeMemoryException under glibc
   */
  public static RemedyResult setDecay(long dirtyDecayMs, long muzzyDecayMs) {
    return remedy("set_decay", Map.of("dirty_ms", dirtyDecayMs, "muzzy_ms", muzzyDecayMs));
  }

  /**
   * Starts jemalloc's background purging threads.
   *
   * @throws NativeMemoryException under glibc
   */
  public static RemedyResult enableBackgroundThreads() {
    return remedy("enable_background_threads", null);
  }

  /**
   * Returns the calling thread's cached objects to their arenas.
   *
   * @throws NativeMemoryException under glibc
   */
  public static RemedyResult flushThreadCache() {
    return remedy("flush_thread_cache", null);
  }

  /**
   * glibc's {@code malloc_trim(0)}: free pages at the top of each arena and inside it go back.
   *
   * @throws NativeMemoryException under jemalloc (use {@link #purge()})
   */
  public static RemedyResult trim() {
    return remedy("trim", null);
  }

  /** Runs the native library's {@code job} and binds its answer. */
  private static RemedyResult remedy(String job, Map<String, Object> request) {
    NativeLibraryLoader.load();
    String answer = request == null ? NativeBridge.call(job) : NativeBridge.call(job, request);
    return JsonBinding.read(RemedyResult.class, Json.parseObject(answer));
  }

  /**
   * What a remedy changed: resident bytes before and after, as the native library measured them.
   */
  public static final class RemedyResult {
    private String remedy;
    private String allocator;
    private Long allocatorResidentBeforeBytes;
    private Long allocatorResidentAfterBytes;
    private long rssBeforeBytes;
    private long rssAfterBytes;
    private String detail;

    /** Bound by {@link JsonBinding}: the fields are the keys of the native library's JSON. */
    private RemedyResult() {}

    /** {@code purge}, {@code set_decay}, {@code enable_background_threads}, ... */
    public String remedy() {
      return remedy;
    }

    /** {@code jemalloc} or {@code glibc}. */
    public String allocator() {
      return allocator;
    }

    /** jemalloc's {@code stats.resident} before; empty on glibc. */
    public Optional<Long> allocatorResidentBeforeBytes() {
      return Optional.ofNullable(allocatorResidentBeforeBytes);
    }

    /** jemalloc's {@code stats.resident} after; empty on glibc. */
    public Optional<Long> allocatorResidentAfterBytes() {
      return Optional.ofNullable(allocatorResidentAfterBytes);
    }

    /** The process's resident bytes before, from {@code /proc/self/status}. */
    public long rssBeforeBytes() {
      return rssBeforeBytes;
    }

    /** The process's resident bytes after. */
    public long rssAfterBytes() {
      return rssAfterBytes;
    }

    /** What the remedy did, in a sentence. */
    public String detail() {
      return detail;
    }

    /** The native library's JSON, key for key. */
    public String toJson() {
      return JsonBinding.write(this);
    }

    @Override
    public String toString() {
      String resident =
          allocatorResidentBeforeBytes()
              .map(
                  before ->
                      ", allocator resident "
                          + ByteFormat.human(before)
                          + " -> "
                          + ByteFormat.human(allocatorResidentAfterBytes().orElse(0L)))
              .orElse("");
      return remedy
          + " ("
          + allocator
          + "): "
          + detail
          + "; RSS "
          + ByteFormat.human(rssBeforeBytes)
          + " -> "
          + ByteFormat.human(rssAfterBytes)
          + resident;
    }
  }

  /** The versions of the Java API and of the native library it loaded; they always match. */
  public static final class Versions {
    private final String java;
    private final String nativeLibrary;
    private final String libraryPath;
    private final String javaRuntime = System.getProperty("java.runtime.version", "unknown");
    private final String javaVm = System.getProperty("java.vm.name", "unknown");
    private final String javaHome = System.getProperty("java.home", "unknown");

    private Versions(String java, String nativeLibrary, String libraryPath) {
      this.java = java;
      this.nativeLibrary = nativeLibrary;
      this.libraryPath = libraryPath;
    }

    /** Version of the Java API (this jar). */
    public String java() {
      return java;
    }

    /** Version reported by {@code libnativemem.so}. */
    public String nativeLibrary() {
      return nativeLibrary;
    }

    /** The file the native library was loaded from. */
    public String libraryPath() {
      return libraryPath;
    }

    /** The Java runtime's version, as it names itself ({@code java.runtime.version}). */
    public String javaRuntime() {
      return javaRuntime;
    }

    /** The Java virtual machine's name ({@code java.vm.name}). */
    public String javaVm() {
      return javaVm;
    }

    /** Where the Java runtime lies ({@code java.home}). */
    public String javaHome() {
      return javaHome;
    }

    /**
     * One JSON object, its keys the accessors' names in snake_case: {@code java}, {@code
     * native_library}, {@code library_path}, {@code java_runtime}, {@code java_vm}, {@code
     * java_home}.
     */
    public String toJson() {
      return JsonBinding.write(this);
    }

    /** Two lines: nativemem's versions and library, then the Java runtime's. */
    @Override
    public String toString() {
      return "nativemem "
          + java
          + " (native "
          + nativeLibrary
          + ", "
          + libraryPath
          + ")\nJava "
          + javaRuntime
          + " ("
          + javaVm
          + ", "
          + javaHome
          + ")";
    }
  }

  /**
   * Registers the {@link NativeMemoryMXBean} as {@code dev.nativemem:type=NativeMemory} with the
   * platform MBean server; repeated calls are harmless. {@code -Dnativemem.jmx=true} does this when
   * this class is first used.
   */
  public static javax.management.ObjectName registerMBean() {
    NativeLibraryLoader.load();
    return NativeMemoryBean.register();
  }

  static {
    if (Boolean.parseBoolean(Setting.JMX.value())) {
      try {
        NativeMemoryBean.register();
      } catch (NativeMemoryException e) {
        // JMX is an extra: the facade must keep working without it.
        AppLog.get("dev.nativemem")
            .log(System.Logger.Level.WARNING, "-Dnativemem.jmx=true: " + e.getMessage());
      }
    }
    JavaFramesSetting.applyAtStart();
    WatchStart.fromSettings();
  }

  /**
   * Heap profiling: start, stop, sample interval; through the process's jemalloc when it can
   * profile, else by import rewriting (Linux x86-64 and aarch64, nothing needed at start). Always
   * returns the profiler; {@link HeapProfiler#isAvailable()} says whether it can run.
   */
  public static HeapProfiler profiling() {
    return HeapProfiler.get();
  }

  /**
   * Writes a heap profile to {@code -Dnativemem.profile.dir} (default {@code java.io.tmpdir}) as
   * {@code nativemem-<pid>-<UTC time>.heap}, keeping the newest {@code -Dnativemem.profile.keep}
   * (default 16) dumps of that name there; older ones and their sidecars are removed. See {@link
   * #dumpProfile(Path)}.
   */
  public static HeapProfile dumpProfile() {
    return HeapProfiler.get().dumpDefault();
  }

  /**
   * Writes a jeprof-compatible heap profile of the live sampled allocations to {@code path} (temp
   * name, then renamed; mode 0600; never overwrites), and beside it {@code <name>.symbols/}:
   * build-ids of the mapped objects, copies of the ones that will not be on disk later, and the
   * JVM's perf map for JIT frames (JDK 17+). Concurrent dumps run one after the other; a failed
   * dump leaves no file.
   *
   * @throws NullPointerException if {@code path} is null
   * @throws IllegalArgumentException if {@code path} is empty, exists, is a directory, or its
   *     directory is missing, not writable, or one where another user could replace the dump
   *     (theirs, or writable by others without the sticky bit; see SECURITY.md)
   * @throws NativeMemoryException if profiling cannot run in this process (the message says how to
   *     start the JVM so that it can), or writing fails
   */
  public static HeapProfile dumpProfile(Path path) {
    Objects.requireNonNull(
        path, "dumpProfile(path): path is null; pass a new file, e.g. Paths.get(\"app.heap\")");
    return HeapProfiler.get().dump(path);
  }

  /**
   * Renders the incident bundle in {@code bundleDir} (written by the memory watch) as one
   * self-contained HTML page, the verdict first, and writes it into the bundle as {@code
   * incident.html} (0600; beside an existing page under a new name): the one way to the page in
   * code; the CLI's {@code incident} command writes the same page.
   *
   * @throws NativeMemoryException if the directory is not this user's alone or writing fails
   */
  public static Path incidentPage(Path bundleDir) {
    Objects.requireNonNull(bundleDir, "incidentPage(bundleDir): bundleDir is null");
    return dev.nativemem.incident.IncidentPage.write(bundleDir);
  }
}
