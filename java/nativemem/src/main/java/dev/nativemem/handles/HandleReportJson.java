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
      kindList.add(k.toMap());
    }
    json.put("kinds", kindList);
    List<Object> siteList = new ArrayList<>();
    for (HandleReport.Site s : r.sites) {
      siteList.add(s.toMap());
    }
    json.put("sites", siteList);
    List<Object> zombieList = new ArrayList<>();
    for (HandleReport.ZombieCache z : r.zombieCaches) {
      zombieList.add(z.toMap());
    }
    json.put("zombie_caches", zombieList);
    List<Object> openList = new ArrayList<>();
    for (HandleReport.OpenHandle o : r.oldestOpen) {
      openList.add(o.toMap());
    }
    json.put("oldest_open", openList);
    json.put("open_cache_capacity_bytes", r.openCacheCapacityBytes);
    json.put("zombie_cache_capacity_bytes", r.zombieCacheCapacityBytes);
    json.put("sites_dropped", r.sitesDropped);
    json.put("sites_kept", r.sitesKept);
    json.put("tracker_memory_bytes", r.trackerMemoryBytes);
    return Json.write(json);
  }
}
