package dev.nativemem;

import dev.nativemem.base.Advice;
import dev.nativemem.base.AllocatorUnavailableException;
import dev.nativemem.base.NativeMemoryException;
import dev.nativemem.base.ProfilingUnavailableException;
import dev.nativemem.base.Setting;
import dev.nativemem.internal.AppLog;
import dev.nativemem.internal.NativeBridge;
import dev.nativemem.internal.NativeLibraryLoader;
import dev.nativemem.memory.AllocatorInfo;
import dev.nativemem.memory.AllocatorStats;
import dev.nativemem.memory.MemoryBreakdown;
import dev.nativemem.memory.MemoryReader;
import dev.nativemem.memory.MemorySnapshot;
import dev.nativemem.memory.ProcessMemory;
import dev.nativemem.memory.Remedies;
import dev.nativemem.profile.HeapProfile;
import dev.nativemem.profile.HeapProfiler;
import dev.nativemem.profile.sampling.JavaFramesSetting;
import dev.nativemem.watch.starting.WatchStart;
import java.nio.file.Path;
import java.util.Objects;

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
   * @throws AllocatorUnavailableException if glibc serves {@code malloc}
   * @throws NativeMemoryException if jemalloc does not know the key
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

  /** Actions that give native memory back now (purge, decay, background threads, trim). */
  public static Remedies remedies() {
    return MemoryReader.remedies();
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
   * Heap profiling through the process's jemalloc: start, stop, sample interval. Always returns the
   * profiler; {@link HeapProfiler#isAvailable()} says whether it can run.
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
   * @throws ProfilingUnavailableException if profiling cannot run in this process
   * @throws NativeMemoryException if writing fails
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
