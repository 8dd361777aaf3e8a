package dev.nativemem.internal;

/**
 * The only class with {@code native} methods: one-to-one with {@code rust/nativemem/src/jni}.
 * Structured results cross as JSON text so both sides stay small and typed at their ends.
 */
public final class NativeBridge {
  static {
    NativeLibraryLoader.load();
  }

  private NativeBridge() {}

  public static native String version();

  public static native String allocatorJson();

  public static native String processMemoryJson();

  public static native long mallctlRead(String key);

  /**
   * Panics inside the native library; proves that panics arrive as Java exceptions. For tests only:
   * package-private, so no code outside this package (and no module) can call it.
   */
  static native void selfTestPanic(String message);

  // Allocator statistics, remedies and the native side of the memory breakdown.

  public static native String allocatorStatsJson();

  /** jemalloc's {@code malloc_stats_print} JSON, or glibc's {@code malloc_info} XML. */
  public static native String rawAllocatorStats();

  public static native String nativeViewJson();

  /**
   * The memory cgroup of process {@code pid}, as {@code container_memory} in {@link
   * #nativeViewJson()}: found through its own mounts and read through its root; {@code null} (JSON)
   * when none is seen.
   */
  public static native String containerMemoryOfJson(int pid);

  /**
   * Resident bytes of this process inside {@code [start, end)} address pairs (a flat array), by
   * {@code mincore}: {@code {"resident_bytes":[n, null, ...]}}, null where a range is not mapped.
   */
  public static native String residentRangesJson(long[] ranges);

  /**
   * The native parts of one {@code MemorySnapshot} in one call: {@code {"native_view": {as
   * nativeViewJson}, "stats": {as allocatorStatsJson}, "resident_bytes": [as residentRangesJson for
   * ranges]}}, the view's allocator totals from the same refresh of the statistics.
   */
  public static native String memorySnapshotJson(long[] ranges);

  /**
   * One sample of the memory watch into {@code out} (10 longs, -1 where unknown): cgroup limit,
   * usage, RSS, allocator allocated and resident, cgroup {@code oom} and {@code oom_kill}, PSI
   * {@code some avg10} in hundredths of a percent, open and leaked handles. No JSON, no garbage.
   */
  public static native void watchSample(long[] out);

  public static native String purgeJson();

  public static native String setDecayJson(long dirtyMs, long muzzyMs);

  public static native String enableBackgroundThreadsJson();

  public static native String flushThreadCacheJson();

  public static native String trimJson();

  // Native-handle registry (rust/nativemem/src/jni/handles.rs).

  public static native int handlesInternKind(String kind);

  public static native int handlesInternSite(String stack);

  public static native int handlesInternThread(String name);

  public static native String handlesSiteText(int site);

  /**
   * Site id of the calling thread's stack (below nativemem's frames) if seen before; -1 if new:
   * walk it and pass its text to {@link #handlesInternSiteOfStack}; -2 if the JVM has no JVMTI.
   */
  public static native int handlesSiteOfStack();

  /** Interns {@code stack}, the text of the calling thread's stack, and keys it by that stack. */
  public static native int handlesInternSiteOfStack(String stack);

  public static native long handlesCreated(int kind, long address, int site, int thread);

  /**
   * {@code how}: 0 closed, 1 transferred, 2 leaked, 3 leaked and freed by the finalizer; false if
   * the handle was not open.
   */
  public static native boolean handlesEnded(long handle, int how);

  /** Handles counted without a record: {@code created}, of which {@code closed}, {@code leaked}. */
  public static native void handlesCounted(
      int kind, int site, long created, long closed, long leaked);

  /**
   * Of the handles counted at {@code site}, {@code pooled} rest now in the pool noted by {@code
   * poolSite} (read from the pool itself): replaces the previous figure for that pool.
   */
  public static native void handlesCountedPooled(int kind, int site, int poolSite, long pooled);

  /**
   * A stream handed to a pool ({@code pooled}, {@code site} names the pool) or out of one: its site
   * and thread become the pool's or the new reader's.
   */
  public static native void handlesReassign(long handle, int site, int thread, boolean pooled);

  /**
   * A cleaner handed a dropped stream's Inflater to a pool: a leak at the reader's site, though the
   * handle lives on, pooled (call before {@link #handlesReassign} moves it to the pool).
   */
  public static native void handlesLeakedIntoPool(long handle);

  /** A handle ended as leaked was then freed by a finalizer: it retains nothing any more. */
  public static native void handlesFinalized(long handle, int kind, int site);

  public static native void handlesSetCapacity(long handle, long bytes);

  public static native void handlesRetain(long holder, long cache);

  public static native void handlesInherit(long target, long source);

  public static native String handlesReportJson();

  /**
   * Counts per kind and cache capacities ({@code kinds}, {@code open_cache_capacity_bytes}, {@code
   * zombie_cache_capacity_bytes}, as in {@link #handlesReportJson}): what the memory breakdown
   * shows, without sites, stacks or listed handles.
   */
  public static native String handlesSummaryJson();

  // Heap profiling (rust/nativemem/src/jni/sampling.rs).

  /** {@code {available, unavailable_reason, active, thread_active, sample_interval_bytes}}. */
  public static native String samplingStatusJson();

  public static native void samplingSetActive(boolean active);

  public static native void samplingSetThreadActive(boolean active);

  /** Discards samples; a positive {@code intervalBytes} also sets the interval. Returns it. */
  public static native long samplingReset(long intervalBytes);

  /**
   * Turns Java frames in heap profiles on or off. Returns {@code {enabled, samples,
   * samples_with_java_frames, distinct_frames}}.
   */
  public static native String samplingJavaFramesJson(boolean on);

  /** The same status as {@link #samplingJavaFramesJson}, changing nothing. */
  public static native String samplingJavaFramesStatusJson();

  /**
   * One heap-profile dump (rust/nativemem/src/jobs/heap_dump.rs): {@code request} is {@code
   * {target, save_from: [directories whose mapped objects the sidecar saves], perf_map, keep}}
   * (perf_map and keep may be absent; keep prunes the default-named dumps beside it). Returns
   * {@code {path, symbols_dir}} and the dump's summary, the keys of {@link #profileSummaryJson}.
   */
  public static native String dumpProfileJson(String request);

  /**
   * The request body of one continuous export: {@code requestJson} names the dump, the protocol
   * ({@code otlp}, {@code pyroscope}), resource attributes, time and a profile id.
   */
  public static native byte[] exportPayload(String requestJson);

  /**
   * Writes {@code contents} to the new file {@code path} as every file nativemem creates is written
   * (SECURITY.md: temp name, 0600, never replacing, refused in a directory others could swap);
   * returns false, writing nothing, if {@code path} exists. {@code noun} and {@code example}
   * ("report", "report.json") name the file in messages.
   */
  public static native boolean writeNewFile(
      String path, byte[] contents, String noun, String example);

  // Directory handles (DirectoryHandle): a descriptor held as a long, every step relative to it.

  /**
   * Opens the directory {@code path} component by component (no link of another user followed);
   * with {@code create}, missing directories are made 0700. Returns the descriptor.
   */
  static native long dirOpen(String path, boolean create);

  static native void dirClose(long fd);

  /** {@code out}: uid, mode, device, inode of the directory. */
  static native void dirStat(long fd, long[] out);

  static native boolean dirHas(long fd, String name);

  /** Makes {@code name} 0700, opens it without following a link, checks it is ours and private. */
  static native long dirMakePrivate(long fd, String name);

  /** Opens the directory {@code name} with O_NOFOLLOW; the caller checks whose it is. */
  static native long dirOpenChild(long fd, String name);

  /** False, writing nothing, when {@code name} exists. */
  static native boolean dirWriteNew(long fd, String name, byte[] contents);

  /** False, renaming nothing, when {@code to} exists in {@code into}. */
  static native boolean dirRename(long fd, String from, long into, String to);

  /** {@code [{name, uid, kind, modified_ms, size_bytes, exact_name}]}, links not followed. */
  static native String dirListJson(long fd);

  /** Removes {@code name} and all of ours below it; false when something not ours stayed. */
  static native boolean dirRemoveTree(long fd, String name);

  static native long dirTreeBytes(long fd, String name);

  /** {@code out}: free bytes for this user, total bytes of the file system. */
  static native void dirSpace(long fd, long[] out);

  /** The regular file's bytes (at most {@code maxBytes}), or null when there is no entry. */
  static native byte[] dirReadRegular(long fd, String name, long maxBytes);

  // Heap profiles (dev.nativemem.profile.HeapProfile, ProfileRequest).

  /** Header of a heap_v2 dump as JSON; throws IllegalArgumentException if it is not one. */
  public static native String profileSummaryJson(String dump);

  /**
   * Runs a profile request, JSON {@code {dump, base, top, report, outputs: [{format, path}]}}: one
   * analysis, outputs with a path written to new files (0600, never replacing one). Returns {@code
   * {report, rendered: [text of each output without a path, in order]}}.
   */
  public static native String profileRequestJson(String request);

  // Attach without jdk.attach (rust/nativemem/src/jni/attach.rs;
  // dev.nativemem.attach.AttachClient).

  /**
   * Checks JVM {@code pid}, starts its attach listener within {@code timeoutMillis} and places
   * {@code jar} where it can read it. Returns JSON {@code {session, jar, jar_is_copy, nspid,
   * other_mount_namespace}}; throws IllegalStateException saying what to do. {@code rerun} is this
   * command line, which the message for another user's JVM repeats.
   */
  public static native String attachOpenJson(int pid, String jar, long timeoutMillis, String rerun);

  /** Loads the session's agent jar with {@code options}: the agent's return code (0: ran). */
  public static native long attachLoadAgent(long session, String options, long timeoutMillis);

  /** The target's system properties as {@code Properties.store} wrote them. */
  public static native byte[] attachProperties(long session, long timeoutMillis);

  /** The reply of one {@code jcmd} command line the target runs itself (no agent needed). */
  public static native byte[] attachDiagnosticCommand(
      long session, String line, long timeoutMillis);

  /** Ends a session; a jar copied for the target that it never loaded is removed. */
  public static native void attachClose(long session);

  // HotSpot's diagnostic commands (rust/nativemem/src/jni/diagnostic_commands.rs;
  // DiagnosticCommands).

  /** Why this JVM cannot run diagnostic commands in-process, or null when it can. */
  static native String diagnosticCommandsAbsence();

  /** The text of one {@code jcmd} command line; the JVM's own exception when it refuses it. */
  static native String diagnosticCommand(String command);

  // The agent's classes (rust/nativemem/src/jni/agent_classes.rs, over jvm/; dev.nativemem.agent).

  /**
   * From now on calls {@code receiver}'s static {@code prepared(Class)} on the preparing thread for
   * every class whose JVM signature starts with one of {@code signaturePrefixes}, once it is
   * prepared and before any of its code runs; returns those classes already prepared. Once per JVM.
   */
  public static native Class<?>[] agentWatchPrepared(Class<?> receiver, String[] signaturePrefixes);

  /** Defines the class {@code name} (internal form) from {@code bytes} in the bootstrap loader. */
  public static native Class<?> agentDefineBootClass(String name, byte[] bytes);
}
