package dev.nativemem.memory;

import dev.nativemem.base.Advice;
import dev.nativemem.base.text.OwnJar;
import dev.nativemem.handles.HandleReport;
import dev.nativemem.handles.advice.HandleAdvice;
import dev.nativemem.internal.ByteFormat;
import dev.nativemem.profile.sampling.SamplingStatus;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/** Turns what the allocator, the container and the JVM report into {@link Advice}. */
final class AdviceRules {
  /** Dirty pages worth a warning when decay never purges them. */
  static final long HIGH_DIRTY_BYTES = 64L << 20;

  /** malloc'd memory beyond the JVM's own (NMT's malloc) worth naming. */
  static final long MALLOC_OUTSIDE_JVM_BYTES = 32L << 20;

  private AdviceRules() {}

  /** What the import-rewriting engine cannot see, said wherever advice sends a user to it. */
  static final String IMPORTS_DO_NOT_SEE =
      "which does not see what libc allocates inside itself (fopen's buffers, strdup,"
          + " getaddrinfo)";

  /**
   * {@code handles}: the full report, whose sites the handle advice names; {@code sampling}: which
   * heap-profiling engine can run here, so no advice says profiles need a restart when one runs.
   */
  static List<Advice> evaluate(
      AllocatorInfo allocator,
      MemoryBreakdown breakdown,
      HandleReport handles,
      Map<String, String> env,
      SamplingStatus sampling) {
    boolean imports = sampling.byImportRewriting();
    List<Advice> advice = new ArrayList<>();
    int cpus = breakdown.containerCpus();
    AllocatorInfo.JemallocConfig jemalloc = allocator.jemallocConfig().orElse(null);
    if (jemalloc != null) {
      int fitting = 4 * cpus;
      if (jemalloc.optNarenas() > fitting) {
        advice.add(
            new Advice(
                "JEMALLOC_ARENAS_EXCEED_CPUS",
                Advice.Severity.WARNING,
                "jemalloc sized "
                    + jemalloc.optNarenas()
                    + " arenas for the host, but the container grants "
                    + cpus
                    + " CPU(s); each arena holds its own free memory, so idle arenas keep"
                    + " resident memory the container is charged for",
                "MALLOC_CONF=narenas:" + fitting));
      }
      long dirty = breakdown.allocatorDirtyBytes().orElse(0L);
      if (jemalloc.dirtyDecayMs() < 0 && dirty >= HIGH_DIRTY_BYTES) {
        advice.add(
            new Advice(
                "JEMALLOC_DIRTY_NEVER_PURGED",
                Advice.Severity.WARNING,
                "jemalloc holds "
                    + ByteFormat.human(dirty)
                    + " of unused dirty pages and dirty_decay_ms is -1, so they are never"
                    + " returned; NativeMemory.purge() returns them now",
                "MALLOC_CONF=dirty_decay_ms:10000"));
      } else if (!jemalloc.backgroundThread() && dirty >= HIGH_DIRTY_BYTES) {
        advice.add(
            new Advice(
                "JEMALLOC_DIRTY_WITHOUT_BACKGROUND_THREAD",
                Advice.Severity.INFO,
                "jemalloc holds "
                    + ByteFormat.human(dirty)
                    + " of unused dirty pages; without background threads they are purged only"
                    + " when a thread allocates in that arena",
                "MALLOC_CONF=background_thread:true"));
      }
      if (!jemalloc.profilingCompiledIn()) {
        advice.add(
            new Advice(
                "PROFILING_NOT_COMPILED_IN",
                Advice.Severity.INFO,
                "this jemalloc was built without profiling, so its own sampler cannot run"
                    + (imports
                        ? "; heap profiles come from the import-rewriting engine, "
                            + IMPORTS_DO_NOT_SEE
                        : " and heap profiles cannot be taken")
                    + "; the allocator in the nativemem jar profiles every allocation (the"
                    + " command prints the lines)",
                envCommand()));
      } else if (!jemalloc.profilingEnabled().orElse(false)) {
        advice.add(
            new Advice(
                "PROFILING_NOT_ENABLED_AT_START",
                Advice.Severity.INFO,
                "jemalloc's own profiling can only be enabled at start; with prof_active:false it"
                    + " costs little and lets you sample every allocation later without a restart"
                    + (imports
                        ? "; until then heap profiles come from the import-rewriting engine, "
                            + IMPORTS_DO_NOT_SEE
                        : ""),
                "MALLOC_CONF=prof:true,prof_active:false"));
      }
    } else {
      if (env.get("MALLOC_ARENA_MAX") == null) {
        advice.add(
            new Advice(
                "GLIBC_ARENA_MAX_UNSET",
                Advice.Severity.WARNING,
                "glibc malloc may create up to 8 arenas per host core, each keeping freed memory;"
                    + " the container grants "
                    + cpus
                    + " CPU(s)",
                "MALLOC_ARENA_MAX=" + Math.max(2, cpus)));
      }
      advice.add(
          imports
              ? new Advice(
                  "GLIBC_PROFILES_BY_IMPORTS",
                  Advice.Severity.INFO,
                  "glibc serves malloc: heap profiles come from the import-rewriting engine"
                      + " (NativeMemory.profiling().start()), "
                      + IMPORTS_DO_NOT_SEE
                      + "; the jemalloc in the nativemem jar profiles every allocation and adds"
                      + " statistics per arena and the purge and decay remedies (the command"
                      + " prints its LD_PRELOAD and MALLOC_CONF lines)",
                  envCommand())
              : new Advice(
                  "GLIBC_NO_PROFILING",
                  Advice.Severity.INFO,
                  "glibc malloc has no statistics per arena and no heap profiles here; the"
                      + " jemalloc in the nativemem jar has both (the command prints its LD_PRELOAD"
                      + " and MALLOC_CONF lines)",
                  envCommand()));
    }
    if (!breakdown.nmtCommittedBytes().isPresent()) {
      advice.add(
          new Advice(
              "NMT_OFF",
              Advice.Severity.INFO,
              "Native Memory Tracking is off, so the JVM's own native memory (threads, GC, code,"
                  + " metaspace) is attributed from pool sizes only",
              "-XX:NativeMemoryTracking=summary"));
    }
    mallocOutsideJvm(breakdown, sampling.available(), advice);
    advice.addAll(HandleAdvice.evaluate(handles));
    long oomKills = breakdown.oomKills().orElse(0L);
    if (oomKills > 0) {
      advice.add(
          new Advice(
              "CONTAINER_OOM_KILLS",
              Advice.Severity.WARNING,
              "the memory cgroup has OOM-killed " + oomKills + " process(es)",
              ""));
    }
    Long limit = breakdown.limitBytes().orElse(null);
    Long headroom = breakdown.headroomBytes().orElse(null);
    if (limit != null && headroom != null && headroom < limit / 10) {
      advice.add(
          new Advice(
              "LOW_HEADROOM",
              Advice.Severity.WARNING,
              "only "
                  + ByteFormat.human(headroom)
                  + " of the "
                  + ByteFormat.human(limit)
                  + " container limit is left",
              ""));
    }
    return advice;
  }

  /**
   * What the allocator has handed out beyond what NMT counts as the JVM's own malloc: memory of
   * native libraries (zlib, RocksDB, JNI code), which no JVM view names.
   */
  private static void mallocOutsideJvm(
      MemoryBreakdown breakdown, boolean profiling, List<Advice> advice) {
    Long jvmMalloc = breakdown.nmtMallocBytes().orElse(null);
    if (jvmMalloc == null) {
      return;
    }
    long outside = breakdown.allocatorAllocatedBytes() - jvmMalloc;
    if (outside < MALLOC_OUTSIDE_JVM_BYTES) {
      return;
    }
    StringBuilder holders = new StringBuilder();
    for (HandleReport.KindCount kind : breakdown.handles().kinds()) {
      if (kind.open() > 0) {
        holders.append(holders.length() == 0 ? "" : ", ").append(kind.open()).append(' ');
        holders.append(kind.kind());
      }
    }
    advice.add(
        new Advice(
            "MALLOC_OUTSIDE_JVM",
            Advice.Severity.WARNING,
            breakdown.allocatorKind()
                + " has "
                + ByteFormat.human(breakdown.allocatorAllocatedBytes())
                + " allocated but NMT counts "
                + ByteFormat.human(jvmMalloc)
                + " of malloc by the JVM itself: "
                + ByteFormat.human(outside)
                + " belongs to native libraries (zlib, RocksDB, JNI code)"
                + (holders.length() == 0 ? "" : "; open native handles: " + holders)
                + "; a heap profile names the sites"
                + (profiling
                    ? " (NativeMemory.profiling().start(), then NativeMemory.dumpProfile())"
                    : ", which needs the profiling allocator the command sets up"),
            profiling ? "NativeMemory.dumpProfile()" : envCommand()));
  }

  /** The command that prints the LD_PRELOAD and MALLOC_CONF lines for the bundled allocator. */
  static String envCommand() {
    return OwnJar.command("env");
  }
}
