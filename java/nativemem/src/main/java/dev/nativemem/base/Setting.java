package dev.nativemem.base;

import java.util.Optional;
import java.util.Properties;

/**
 * Every {@code nativemem.*} system property, with its default and meaning: the one table the code
 * reads them through, {@code java -jar nativemem.jar settings} prints and docs/configuration.md is
 * checked against. The ones set are logged once, when the native library loads ({@code
 * internal.SettingsInEffect}).
 */
public enum Setting {
  LIBRARY_PATH(
      "nativemem.library.path",
      null,
      "the copy extracted from the jar",
      "Load exactly this `libnativemem.so`; a wrong path is an error, there is no fallback."),
  TMPDIR(
      "nativemem.tmpdir",
      null,
      "${java.io.tmpdir}/nativemem-<user>",
      "Where the native library is extracted; it must be yours and writable by no other user."),
  JMX(
      "nativemem.jmx",
      "false",
      null,
      "`true`: register the `NativeMemoryMXBean` when `NativeMemory` is first used (with the"
          + " agent: at start)."),
  PROFILE_DIR(
      "nativemem.profile.dir",
      null,
      "${java.io.tmpdir}",
      "Where `NativeMemory.dumpProfile()` writes when no path is given."),
  PROFILE_KEEP(
      "nativemem.profile.keep",
      "16",
      null,
      "How many default-named dumps `dumpProfile()` keeps there; older ones are removed."),
  PROFILE_JAVA_FRAMES(
      "nativemem.profile.javaFrames",
      "false",
      null,
      "`true`: heap profiles record the Java frames above each sampled native allocation"
          + " (jemalloc 5.3+); also `HeapProfiler.javaFrames(boolean)` at run time."),
  HANDLES_LEVEL(
      "nativemem.handles.level",
      "sampled",
      null,
      "Handle tracking: `off`, `counts` (no stacks), `sampled` (1 stack in `interval` per thread, and up to 4 a second of each kind, in bursts of up to 32), `full`"
          + " (every stack); the agent argument `level=` wins. In a JVM started without the agent,"
          + " `attach <pid> handles` starts tracking at `full` until the JVM exits, and says so"
          + " there and in the JVM's log."),
  HANDLES_INTERVAL(
      "nativemem.handles.interval",
      "128",
      null,
      "`sampled`: one creation stack per this many handles per thread; the agent argument"
          + " `interval=` wins."),
  HANDLES_INCLUDE(
      "nativemem.handles.include",
      "",
      "all kinds",
      "Kinds to track joined by `+` (`ColumnFamilyOptions+Statistics`), or the groups `rocksdb`,"
          + " `forst`, `zip`."),
  HANDLES_EXCLUDE(
      "nativemem.handles.exclude", "", "none", "Kinds or groups not to track, joined by `+`."),
  HANDLES_REPORT(
      "nativemem.handles.report",
      "",
      "none",
      "Handle report written at exit: JSON if it ends in `.json`, text otherwise; 0600, never"
          + " overwrites."),
  HANDLES_SKIP(
      "nativemem.handles.skip",
      "",
      "none",
      "Class-name prefixes joined by `+` whose frames are never a handle's \"created at\" line."),
  HANDLES_KNOWN(
      "nativemem.handles.known",
      "",
      "none",
      "Leaks accepted in this JVM, joined by `+`: known-leak catalogue ids (`FLINK-39923`) or"
          + " kinds; reported as accepted, not failed by `NativeLeakCheck`."),
  WATCH(
      "nativemem.watch",
      "off",
      null,
      "`on`: start the memory watch (`MemoryWatch.start`) when the agent starts or `NativeMemory`"
          + " is first used; the agent argument `watch=on` does the same."),
  WATCH_DIR(
      "nativemem.watch.dir",
      null,
      "${java.io.tmpdir}/nativemem-incidents-<user>",
      "Where the watch writes incident bundles (created 0700 when missing). Yours and writable by"
          + " no other user: bundles go in it. A shared volume (root's, 0777 or 2777 as Kubernetes"
          + " makes an `emptyDir` or an `fsGroup` volume): bundles go in a private"
          + " `nativemem-<uid>` nativemem makes in it. Put it on a volume that outlives the"
          + " container."),
  WATCH_INTERVAL(
      "nativemem.watch.intervalSeconds",
      "1",
      null,
      "Seconds between two samples of the watch; a decimal below 1 for shorter (`0.25`)."),
  WATCH_HISTORY(
      "nativemem.watch.historySeconds",
      "3600",
      null,
      "Seconds of samples the watch keeps (the bundle's timeline)."),
  WATCH_THRESHOLDS(
      "nativemem.watch.thresholdsPercent",
      "85+95+98+99",
      null,
      "Usage in percent of the memory limit that triggers a bundle, joined by `+`; each fires once"
          + " per crossing and re-arms below; a higher one within the minimum interval escalates"
          + " (a bundle of the cheap parts that replaces the incident's previous escalation)."),
  WATCH_GROWTH_WINDOW(
      "nativemem.watch.growth.windowSeconds",
      "300",
      null,
      "Seconds of usage the growth trigger fits a line to (0: no growth trigger)."),
  WATCH_GROWTH_HORIZON(
      "nativemem.watch.growth.horizonSeconds",
      "900",
      null,
      "The growth trigger fires when that line reaches the limit within this many seconds."),
  WATCH_LEAKED(
      "nativemem.watch.leaked",
      "100",
      null,
      "Handles newly leaked within a minute that trigger a bundle (0: no leak trigger)."),
  WATCH_MIN_INTERVAL(
      "nativemem.watch.minIntervalSeconds",
      "60",
      null,
      "Seconds between two bundles of automatic triggers, except a higher limit threshold"
          + " (captures asked for are not limited)."),
  WATCH_KEEP(
      "nativemem.watch.keep",
      "10",
      null,
      "Bundles of this process's user kept in the watch directory; the oldest are removed."),
  WATCH_MAX_MIB(
      "nativemem.watch.maxMiB",
      "1024",
      null,
      "MiB all kept bundles may take; the oldest are removed first (the newest always stays)."),
  WATCH_PROFILE(
      "nativemem.watch.profile",
      "true",
      null,
      "`true`: starting the watch turns heap sampling on where it can run (as"
          + " `HeapProfiler.start()` does, with either engine; logged when it does), so bundles"
          + " carry a heap profile of what was sampled since; `false`: sampling stays as it is"
          + " and bundles have no heap profile."),
  EXPORT(
      "nativemem.export",
      "off",
      null,
      "`otlp` or `pyroscope`: every `nativemem.export.interval`, send the live native heap (a dump"
          + " made into one request) to `nativemem.export.endpoint`; the agent argument"
          + " `export=otlp` does the same. See docs/continuous-profiling.md."),
  EXPORT_ENDPOINT(
      "nativemem.export.endpoint",
      null,
      "none",
      "Base URL of the profiling backend: an OpenTelemetry Collector's OTLP/HTTP receiver"
          + " (`http://otel-collector:4318`, `/v1development/profiles` appended) or Pyroscope"
          + " (`http://pyroscope:4040`, `/ingest` appended)."),
  EXPORT_INTERVAL(
      "nativemem.export.interval",
      "60s",
      null,
      "Time between two exports: `60s`, `2m`, `1500ms`, or seconds; at least 1s."),
  JUNIT_REQUIRE_AGENT(
      "nativemem.junit.requireAgent",
      "true",
      null,
      "`false`: `NativeLeakCheck` runs without the agent, checking only resources registered"
          + " with `NativeHandles.track`."),
  JUNIT_MAX_LEAKED_BYTES(
      "nativemem.junit.maxLeakedBytes",
      "4194304",
      null,
      "With heap profiling available, `NativeLeakCheck` fails a class whose code left more native"
          + " bytes live than this (estimated from samples, after a GC); `off`: no byte check.");

  private final String property;
  private final String defaultValue;
  private final String shownDefault;
  private final String description;

  /**
   * @param defaultValue the value when unset, or null when the code computes it
   * @param shownDefault how the default reads for people, when not {@code defaultValue} itself
   */
  Setting(String property, String defaultValue, String shownDefault, String description) {
    this.property = property;
    this.defaultValue = defaultValue;
    this.shownDefault = shownDefault;
    this.description = description;
  }

  /** The system property, {@code nativemem.…}. */
  public String property() {
    return property;
  }

  /** The value when the property is unset; null when it is computed (a directory, a path). */
  public String defaultValue() {
    return defaultValue;
  }

  /** The default as people read it. */
  public String shownDefault() {
    return shownDefault != null ? shownDefault : defaultValue;
  }

  /** What it does, in one sentence. */
  public String description() {
    return description;
  }

  /** The value in this JVM: the system property, else {@link #defaultValue()}. */
  public String value() {
    return valueIn(System.getProperties());
  }

  /** The value in {@code properties}, else {@link #defaultValue()}. */
  public String valueIn(Properties properties) {
    return properties.getProperty(property, defaultValue);
  }

  /** Whether the property is set in this JVM. */
  public boolean isSet() {
    return System.getProperty(property) != null;
  }

  /** The setting named {@code property}, if there is one. */
  public static Optional<Setting> of(String property) {
    for (Setting setting : values()) {
      if (setting.property.equals(property)) {
        return Optional.of(setting);
      }
    }
    return Optional.empty();
  }

  @Override
  public String toString() {
    return property;
  }
}
