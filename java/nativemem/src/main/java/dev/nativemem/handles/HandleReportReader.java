package dev.nativemem.handles;

import dev.nativemem.base.NativeMemoryException;
import dev.nativemem.handles.catalogue.LeakCatalogue;
import dev.nativemem.handles.catalogue.LibraryOwners;
import dev.nativemem.handles.tracking.CreationSites;
import dev.nativemem.handles.tracking.HandleTracker;
import dev.nativemem.internal.Json;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;

/**
 * Builds a {@link HandleReport} from the native registry's answer (the {@code handles_report} job),
 * adding what only the Java side knows: the classes counted under each RocksDB kind, the first
 * application frame of each stack, the catalogue's known leaks, what this JVM accepts, and the
 * memory of the Java-side maps.
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
    Map<String, Object> json = Json.parseObject(tracker.summaryJson());
    List<HandleReport.KindCount> kinds = new ArrayList<>();
    for (Map<String, Object> k : list(json, "kinds")) {
      kinds.add(kind(k));
    }
    return new HandleReport(
        tracker.agentActive(),
        tracker.options().toString(),
        kinds,
        new ArrayList<>(),
        new ArrayList<>(),
        new ArrayList<>(),
        Json.number(json, "open_cache_capacity_bytes"),
        Json.number(json, "zombie_cache_capacity_bytes"),
        0,
        0,
        0);
  }

  /** {@code json}, the registry's report, with the Java side's {@code javaMemoryBytes}. */
  static HandleReport read(
      boolean agentActive, String options, Map<String, Object> json, long javaMemoryBytes) {
    List<HandleReport.KindCount> kinds = new ArrayList<>();
    for (Map<String, Object> k : list(json, "kinds")) {
      kinds.add(kind(k));
    }
    List<HandleReport.Site> sites = new ArrayList<>();
    List<Map<String, Object>> siteJson = list(json, "sites");
    // Read only for sites: reading it loads the catalogue.
    List<KnownLeak> jvmWide =
        siteJson.isEmpty() ? Collections.emptyList() : KnownLeak.acceptedInThisJvm();
    for (Map<String, Object> s : siteJson) {
      sites.add(site(s, jvmWide));
    }
    List<HandleReport.ZombieCache> zombies = new ArrayList<>();
    for (Map<String, Object> z : list(json, "zombie_caches")) {
      zombies.add(zombie(z));
    }
    List<HandleReport.OpenHandle> oldest = new ArrayList<>();
    for (Map<String, Object> o : list(json, "oldest_open")) {
      oldest.add(
          new HandleReport.OpenHandle(
              Json.string(o, "kind"),
              Json.number(o, "address"),
              Json.string(o, "thread"),
              Json.number(o, "created_epoch_ms")));
    }
    return new HandleReport(
        agentActive,
        options,
        kinds,
        sites,
        zombies,
        oldest,
        Json.number(json, "open_cache_capacity_bytes"),
        Json.number(json, "zombie_cache_capacity_bytes"),
        Json.number(json, "sites_dropped"),
        Json.number(json, "sites_kept"),
        // The native registry's part, to which the Java side adds its own.
        Json.number(json, "tracker_memory_bytes") + javaMemoryBytes);
  }

  private static HandleReport.KindCount kind(Map<String, Object> json) {
    String kind = Json.string(json, "kind");
    return new HandleReport.KindCount(
        kind,
        Json.number(json, "created"),
        Json.number(json, "closed"),
        Json.number(json, "transferred"),
        Json.number(json, "open"),
        numberOr(json, "pooled"),
        Json.number(json, "leaked"),
        HandleTracker.get().subclassesOf(kind));
  }

  private static HandleReport.Site site(Map<String, Object> json, List<KnownLeak> jvmWide) {
    String kind = Json.string(json, "kind");
    String text = Json.string(json, "stack");
    LeakCatalogue.Match known = LeakCatalogue.get().match(kind, text);
    String createdAt = CreationSites.applicationFrame(text);
    if (known != null) {
      known = known.ownedBy(LibraryOwners.ofFrame(createdAt));
    }
    return new HandleReport.Site(
        kind,
        Json.number(json, "open"),
        numberOr(json, "pooled"),
        Json.number(json, "leaked"),
        numberOr(json, "freed_by_finalizer"),
        numberOr(json, "last_freed_by_finalizer_epoch_ms"),
        createdAt,
        CreationSites.frames(text),
        known,
        KnownLeak.acceptedReason(Collections.emptyList(), jvmWide, known, kind, text));
  }

  private static HandleReport.ZombieCache zombie(Map<String, Object> json) {
    String text = Json.string(json, "cache_site");
    List<HandleReport.Retainer> retainers = new ArrayList<>();
    for (Map<String, Object> r : list(json, "retainers")) {
      String site = Json.string(r, "site");
      retainers.add(
          new HandleReport.Retainer(
              Json.string(r, "kind"),
              Json.string(r, "state"),
              CreationSites.applicationFrame(site),
              CreationSites.frames(site)));
    }
    return new HandleReport.ZombieCache(
        Json.string(json, "cache_kind"),
        Json.number(json, "capacity_bytes"),
        CreationSites.applicationFrame(text),
        CreationSites.frames(text),
        retainers);
  }

  private static long numberOr(Map<String, Object> json, String key) {
    return json.get(key) instanceof Number ? ((Number) json.get(key)).longValue() : 0;
  }

  @SuppressWarnings("unchecked")
  private static List<Map<String, Object>> list(Map<String, Object> json, String key) {
    Object value = json.get(key);
    if (!(value instanceof List)) {
      throw new NativeMemoryException("native JSON lacks list '" + key + "': " + json);
    }
    return (List<Map<String, Object>>) value;
  }
}
