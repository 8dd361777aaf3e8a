package dev.nativemem.incident.layout;

/**
 * The file names of an incident bundle ({@code nativemem-incident-<pid>-<time>-<trigger>/}), the
 * one place the writer (the memory watch) and the readers (the page, the verdict) take them from.
 * The native analysis reads a bundle too ({@code analyze <bundle>}): its names are in {@code
 * rust/nativemem/src/profile/bundle_layout.rs}, and a test holds the two equal.
 */
public final class BundleLayout {
  /** What the bundle holds and lacks, with why: written first and last. */
  public static final String MANIFEST = "manifest.json";

  /** The watch's samples, oldest first. */
  public static final String TIMELINE = "timeline.json";

  /** The memory snapshot: breakdown, allocator statistics, process memory. */
  public static final String SNAPSHOT = "snapshot.json";

  /** The breakdown as text. */
  public static final String BREAKDOWN_TEXT = "breakdown.txt";

  /** What the advice rules say. */
  public static final String ADVICE = "advice.json";

  /** The advice as text. */
  public static final String ADVICE_TEXT = "advice.txt";

  /** The handle report. */
  public static final String HANDLES = "handles.json";

  /** The handle report as text. */
  public static final String HANDLES_TEXT = "handles.txt";

  /** jemalloc's {@code malloc_stats_print} JSON (under jemalloc). */
  public static final String JEMALLOC_STATS = "allocator-report.json";

  /** glibc's {@code malloc_info} XML (under glibc). */
  public static final String GLIBC_MALLOC_INFO = "malloc-info.xml";

  /** The JVM's native memory tracking summary. */
  public static final String NMT_TEXT = "nmt.txt";

  /** The heap profile (jemalloc's heap_v2 format). */
  public static final String PROFILE = "profile.heap";

  /** The heap profile's sidecar: build-ids, objects, JIT frames. */
  public static final String PROFILE_SYMBOLS = PROFILE + ".symbols";

  /** The heap profile's top sites. */
  public static final String PROFILE_SITES = "profile-report.json";

  /** The heap profile as a flame graph. */
  public static final String PROFILE_FLAME_GRAPH = "profile-flame.svg";

  /** The heap profile for {@code go tool pprof}. */
  public static final String PROFILE_PPROF = "profile.pb.gz";

  /** The growth since the previous bundle's heap profile. */
  public static final String PROFILE_DIFF = "profile-diff.json";

  /** The incident page. */
  public static final String PAGE = "incident.html";

  private BundleLayout() {}
}
