import dev.nativemem.NativeMemory;
import dev.nativemem.handles.NativeHandles;
import dev.nativemem.internal.Json;
import dev.nativemem.internal.NativeBridge;
import dev.nativemem.memory.MemoryBreakdown;
import dev.nativemem.memory.MemorySnapshot;
import dev.nativemem.metrics.NativeMemoryMetrics;
import dev.nativemem.profile.sampling.SamplingStatus;
import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;

/**
 * Benchmark (not a test): where a cold metrics reading spends its time, step by step. Each step
 * runs alone after a pause longer than {@link MemorySnapshot#MAX_AGE} (205 ms, as a scrape every
 * 15 s finds the process: the reading expired, caches cold), {@code rounds} times in turn with the
 * others; prints the median and the fastest of each in µs. Steps a jar does not have are left out
 * (the one-call snapshot is newer than the reading it replaced); a jar before {@code
 * NativeBridge.call} is asked through its older natives. Run it once per jar:
 *
 * <pre>java -cp nativemem.jar bench/ScrapeSteps.java [rounds=25]</pre>
 */
public class ScrapeSteps {
  public static void main(String[] args) throws Exception {
    int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 25;
    NativeMemory.version();
    boolean jemalloc = NativeMemory.allocator().isJemalloc();
    Callable<Object> view = raw("native_view", "{}", "nativeViewJson");
    Callable<Object> stats = raw("allocator_stats", "{}", "allocatorStatsJson");
    Callable<Object> report = raw("handles_report", "{}", "handlesReportJson");
    Callable<Object> sampling = raw("sampling_status", "{}", "samplingStatusJson");
    Callable<Object> snapshot = raw("memory_snapshot", "{\"ranges\":[]}", "memorySnapshotJson");
    String viewJson = (String) view.call();
    String statsJson = (String) stats.call();
    String reportJson = (String) report.call();
    String samplingJson = (String) sampling.call();

    Map<String, Callable<Object>> steps = new LinkedHashMap<>();
    steps.put("native view: call", view);
    steps.put("native view: parse", () -> Json.parseObject(viewJson));
    steps.put("allocator stats: call", stats);
    steps.put("allocator stats: parse", () -> Json.parseObject(statsJson));
    if (snapshot != null) {
      steps.put("one-call snapshot, no ranges: call", snapshot);
      String one = (String) snapshot.call();
      steps.put("one-call snapshot: parse", () -> Json.parseObject(one));
    }
    steps.put(
        "breakdown, committed view (no residency)",
        () -> NativeMemory.breakdown(MemoryBreakdown.View.COMMITTED));
    steps.put("breakdown, resident view", () -> NativeMemory.breakdown());
    steps.put("handle summary (call + parse)", NativeHandles::summary);
    steps.put("handle report (call + parse)", NativeHandles::report);
    steps.put("handle report: parse", () -> Json.parseObject(reportJson));
    steps.put("profiling status (call + parse)", SamplingStatus::read);
    steps.put("profiling status: parse", () -> Json.parseObject(samplingJson));
    if (jemalloc) {
      steps.put("mallctl prof.active", () -> NativeMemory.mallctl("prof.active"));
    }
    steps.put("snapshot, fresh", NativeMemory::snapshot);
    steps.put("metrics reading, fresh (snapshot included)", NativeMemoryMetrics::read);

    Map<String, List<Long>> nanos = new LinkedHashMap<>();
    steps.keySet().forEach(name -> nanos.put(name, new ArrayList<>()));
    Object sink = null;
    for (int round = -2; round < rounds; round++) { // two rounds of warm-up
      for (Map.Entry<String, Callable<Object>> step : steps.entrySet()) {
        Thread.sleep(MemorySnapshot.MAX_AGE.toMillis() + 5);
        long start = System.nanoTime();
        sink = step.getValue().call();
        long took = System.nanoTime() - start;
        if (round >= 0) {
          nanos.get(step.getKey()).add(took);
        }
      }
    }
    System.out.printf("%-46s %10s %10s%n", "step (cold, after 205 ms)", "median µs", "fastest");
    for (Map.Entry<String, List<Long>> step : nanos.entrySet()) {
      long[] sorted = step.getValue().stream().mapToLong(Long::longValue).sorted().toArray();
      System.out.printf(
          "%-46s %10.0f %10.0f%n",
          step.getKey(), sorted[sorted.length / 2] / 1e3, sorted[0] / 1e3);
    }
    System.out.println(
        rounds
            + " rounds, "
            + (jobs() == null ? "one native per reading" : "NativeBridge.call jobs")
            + ", " + (jemalloc ? "jemalloc" : "glibc") + (sink == null ? "" : ""));
  }

  /** {@code NativeBridge.call(job, request)} where the jar has it. */
  private static Method jobs() {
    try {
      return NativeBridge.class.getMethod("call", String.class, String.class);
    } catch (NoSuchMethodException older) {
      return null;
    }
  }

  /**
   * One native reading as the jar offers it: the job through {@code NativeBridge.call}, or, in a
   * jar before the jobs, the native method {@code older} (with no ranges where it takes them);
   * null when the jar has neither.
   */
  private static Callable<Object> raw(String job, String request, String older) {
    Method call = jobs();
    if (call != null) {
      return () -> call.invoke(null, job, request);
    }
    for (Method method : NativeBridge.class.getMethods()) {
      if (method.getName().equals(older)) {
        Object[] arguments =
            method.getParameterCount() == 0 ? new Object[0] : new Object[] {new long[0]};
        return () -> method.invoke(null, arguments);
      }
    }
    return null;
  }
}
