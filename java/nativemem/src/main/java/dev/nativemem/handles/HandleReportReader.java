package dev.nativemem.handles;

import dev.nativemem.handles.catalogue.LeakCatalogue;
import dev.nativemem.handles.catalogue.LibraryOwners;
import dev.nativemem.handles.tracking.CreationSites;
import dev.nativemem.handles.tracking.HandleTracker;
import dev.nativemem.internal.Json;
import dev.nativemem.internal.JsonBinding;
import java.lang.invoke.VarHandle;
import java.util.Collections;
import java.util.List;
import java.util.Map;

/**
 * Builds a {@link HandleReport} from the native registry's answer (the {@code handles_report} job),
 * bound by {@link JsonBinding}, then adds what only the Java side knows: the classes counted under
 * each RocksDB kind, the first application frame of each stack, the catalogue's known leaks, what
 * this JVM accepts, and the memory of the Java-side maps.
 */
final class HandleReportReader {
  private HandleReportReader() {}

  /** The report of the tracker now. */
  static HandleReport read(HandleTracker tracker) {
    // Read before the counts: the Inflater that reading the catalogue uses is then in them.
    LeakCatalogue.get();
    return read(
        tracker.agentActive(),
        tracker.options().toString(),
        Json.parseObject(tracker.reportJson()),
        tracker.javaMemoryBytes());
  }

  /**
   * Counts per kind and cache capacities only, from the registry's summary ({@code handles_summary}
   * job): no site, zombie cache or open handle is listed, none is copied out.
   */
  static HandleReport summary(HandleTracker tracker) {
    LeakCatalogue.get(); // as for the report: its Inflater is counted alike
    return summary(
        tracker.agentActive(),
        tracker.options().toString(),
        Json.parseObject(tracker.summaryJson()));
  }

  /** {@code json}, the registry's summary, as a report listing nothing. */
  static HandleReport summary(boolean agentActive, String options, Map<String, Object> json) {
    HandleReport report = HandleReport.of(JsonBinding.read(HandleSummary.class, json));
    return addJavaSide(report, agentActive, options, 0);
  }

  /** {@code json}, the registry's report, with the Java side's {@code javaMemoryBytes}. */
  static HandleReport read(
      boolean agentActive, String options, Map<String, Object> json, long javaMemoryBytes) {
    HandleReport report = JsonBinding.read(HandleReport.class, json);
    return addJavaSide(report, agentActive, options, javaMemoryBytes);
  }

  /**
   * Sets the {@link JsonBinding.Added} fields of a report just bound, rewrites its stacks to {@code
   * at} frames and adds {@code javaMemoryBytes} to the registry's memory; then publishes it with a
   * release fence, as binding does.
   */
  private static HandleReport addJavaSide(
      HandleReport report, boolean agentActive, String options, long javaMemoryBytes) {
    report.agentActive = agentActive;
    report.options = options;
    report.trackerMemoryBytes += javaMemoryBytes;
    HandleTracker tracker = HandleTracker.get();
    for (HandleReport.KindCount kind : report.kinds) {
      kind.classes = Collections.unmodifiableList(tracker.subclassesOf(kind.kind));
    }
    // Read only for sites: reading it loads the catalogue.
    List<KnownLeak> jvmWide =
        report.sites.isEmpty() ? Collections.emptyList() : KnownLeak.acceptedInThisJvm();
    for (HandleReport.Site site : report.sites) {
      addJavaSide(site, jvmWide);
    }
    for (HandleReport.ZombieCache zombie : report.zombieCaches) {
      zombie.cacheCreatedAt = CreationSites.applicationFrame(zombie.cacheSite);
      zombie.cacheSite = CreationSites.frames(zombie.cacheSite);
      for (HandleReport.Retainer retainer : zombie.retainers) {
        retainer.createdAt = CreationSites.applicationFrame(retainer.site);
        retainer.site = CreationSites.frames(retainer.site);
      }
    }
    VarHandle.releaseFence();
    return report;
  }

  private static void addJavaSide(HandleReport.Site site, List<KnownLeak> jvmWide) {
    String text = site.stack;
    site.createdAt = CreationSites.applicationFrame(text);
    LeakCatalogue.Match match = LeakCatalogue.get().match(site.kind, text);
    if (match != null) {
      match = match.ownedBy(LibraryOwners.ofFrame(site.createdAt));
      site.match = match;
      site.knownLeak = match.label();
      site.known = Collections.unmodifiableMap(match.toMap());
    }
    site.accepted =
        KnownLeak.acceptedReason(Collections.emptyList(), jvmWide, match, site.kind, text);
    site.stack = CreationSites.frames(text);
  }
}
