package dev.nativemem.internal;

/**
 * The only class with {@code native} methods: one-to-one with {@code rust/nativemem/src/jni}. Every
 * job that answers with a value is one {@link #call}: a job's name, a JSON request in, the value's
 * JSON out (the names and requests: {@code rust/nativemem/src/jni/jobs.rs}). The other natives run
 * often on an application's thread, move bytes, hold a descriptor or a session, or define classes.
 */
public final class NativeBridge {
  static {
    NativeLibraryLoader.load();
  }

  private NativeBridge() {}

  /**
   * The library's version, asked first by the loader: a native of its own, so that a library of
   * another version is named as such whatever its jobs are.
   */
  public static native String version();

  /**
   * Runs the job {@code job} with {@code request}, a JSON object of its keys (unknown keys are
   * refused), and returns its answer as JSON. An unknown job or a malformed request is an
   * IllegalArgumentException naming what is accepted; the job's own errors arrive as the exception
   * a caller acts on.
   */
  public static native String call(String job, String request);

  /** {@link #call} with {@code request} written as a JSON object. */
  public static String call(String job, java.util.Map<String, ?> request) {
    return call(job, Json.write(request));
  }

  /** {@link #call} of a job whose answer is a number. */
  public static long callForNumber(String job, java.util.Map<String, ?> request) {
    Object answer = Json.parse(call(job, request));
    if (!(answer instanceof Number)) {
      throw new dev.nativemem.base.NativeMemoryException(
          "the native job " + job + " answered " + answer + ", not a number");
    }
    return ((Number) answer).longValue();
  }

  /** {@link #call} of a job that takes nothing. */
  public static String call(String job) {
    return call(job, "{}");
  }

  public static native long mallctlRead(String key);

  // The memory watch (rust/nativemem/src/jni/memory.rs).

  /**
   * One sample of the memory watch into {@code out} (10 longs, -1 where unknown): cgroup limit,
   * usage, RSS, allocator allocated and resident, cgroup {@code oom} and {@code oom_kill}, PSI
   * {@code some avg10} in hundredths of a percent, open and leaked handles. No JSON, no garbage.
   */
  public static native void watchSample(long[] out);

  // The native-handle registry's events of every handle (rust/nativemem/src/jni/handles.rs); what
  // is told once per kind, thread, site or batch is a job.

  /**
   * Site id of the calling thread's stack (below nativemem's frames) if seen before; -1 if new:
   * walk it and pass its text to the {@code handle_site_of_stack} job; -2 if the JVM has no JVMTI.
   */
  public static native int handlesSiteOfStack();

  public static native long handlesCreated(int kind, long address, int site, int thread);

  /**
   * {@code how}: 0 closed, 1 transferred, 2 leaked, 3 leaked and freed by the finalizer; false if
   * the handle was not open.
   */
  public static native boolean handlesEnded(long handle, int how);

  /**
   * A stream handed to a pool ({@code pooled}, {@code site} names the pool) or out of one: its site
   * and thread become the pool's or the new reader's.
   */
  public static native void handlesReassign(long handle, int site, int thread, boolean pooled);

  public static native void handlesSetCapacity(long handle, long bytes);

  public static native void handlesRetain(long holder, long cache);

  public static native void handlesInherit(long target, long source);

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

  // Attach without jdk.attach (rust/nativemem/src/jni/attach.rs;
  // dev.nativemem.attach.AttachClient).

  /** The target's system properties as {@code Properties.store} wrote them. */
  public static native byte[] attachProperties(long session, long timeoutMillis);

  /** The reply of one {@code jcmd} command line the target runs itself (no agent needed). */
  public static native byte[] attachDiagnosticCommand(
      long session, String line, long timeoutMillis);

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
