package dev.nativemem.handles;

import dev.nativemem.internal.Json;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** {@link HandleReport} as JSON, schema {@value HandleReport#SCHEMA}: the agent's report file. */
final class HandleReportJson {
  private HandleReportJson() {}

  static String write(HandleReport r) {
    Map<String, Object> json = new LinkedHashMap<>();
    json.put("schema", HandleReport.SCHEMA);
    json.put("agent_active", r.agentActive);
    json.put("options", r.options);
    List<Object> kindList = new ArrayList<>();
    for (HandleReport.KindCount k : r.kinds) {
      kindList.add(map(k));
    }
    json.put("kinds", kindList);
    List<Object> siteList = new ArrayList<>();
    for (HandleReport.Site s : r.sites) {
      siteList.add(map(s));
    }
    json.put("sites", siteList);
    List<Object> zombieList = new ArrayList<>();
    for (HandleReport.ZombieCache z : r.zombieCaches) {
      zombieList.add(map(z));
    }
    json.put("zombie_caches", zombieList);
    List<Object> openList = new ArrayList<>();
    for (HandleReport.OpenHandle o : r.oldestOpen) {
      openList.add(map(o));
    }
    json.put("oldest_open", openList);
    json.put("open_cache_capacity_bytes", r.openCacheCapacityBytes);
    json.put("zombie_cache_capacity_bytes", r.zombieCacheCapacityBytes);
    json.put("sites_dropped", r.sitesDropped);
    json.put("sites_kept", r.sitesKept);
    json.put("tracker_memory_bytes", r.trackerMemoryBytes);
    return Json.write(json);
  }

  static Map<String, Object> map(HandleReport.KindCount k) {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("kind", k.kind);
    m.put("created", k.created);
    m.put("closed", k.closed);
    m.put("transferred", k.transferred);
    m.put("open", k.open);
    m.put("pooled", k.pooled);
    m.put("leaked", k.leaked);
    m.put("classes", k.classes);
    return m;
  }

  private static Map<String, Object> map(HandleReport.Site s) {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("kind", s.kind);
    m.put("open", s.open);
    m.put("pooled", s.pooled);
    m.put("leaked", s.leaked);
    m.put("freed_by_finalizer", s.freedByFinalizer);
    if (s.freedByFinalizer > 0) {
      m.put("last_freed_by_finalizer_epoch_ms", s.lastFreedByFinalizerEpochMillis);
    }
    m.put("created_at", s.createdAt);
    m.put("known_leak", s.knownLeak);
    m.put("known", s.known == null ? null : s.known.toMap());
    m.put("accepted", s.accepted);
    m.put("stack", s.stack);
    return m;
  }

  private static Map<String, Object> map(HandleReport.ZombieCache z) {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("cache_kind", z.cacheKind);
    m.put("capacity_bytes", z.capacityBytes);
    m.put("cache_created_at", z.cacheCreatedAt);
    m.put("cache_site", z.cacheStack);
    List<Object> list = new ArrayList<>();
    for (HandleReport.Retainer r : z.retainers) {
      list.add(map(r));
    }
    m.put("retainers", list);
    return m;
  }

  private static Map<String, Object> map(HandleReport.Retainer r) {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("kind", r.kind);
    m.put("state", r.state);
    m.put("created_at", r.createdAt);
    m.put("site", r.stack);
    return m;
  }

  private static Map<String, Object> map(HandleReport.OpenHandle o) {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("kind", o.kind);
    m.put("address", o.address);
    m.put("thread", o.thread);
    m.put("created_epoch_ms", o.createdEpochMillis);
    return m;
  }
}
