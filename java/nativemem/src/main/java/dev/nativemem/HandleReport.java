package dev.nativemem;

import dev.nativemem.internal.ByteFormat;
import dev.nativemem.internal.Json;
import dev.nativemem.internal.handles.CreationSites;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Native handles of this JVM: counts per kind, open and leaked handles per creation site, and
 * zombie caches. Immutable; {@link #toString()} for people, {@link #toJson()} for machines.
 */
public final class HandleReport {
  private final boolean agentActive;
  private final String options;
  private final List<KindCount> kinds;
  private final List<Site> sites;
  private final List<ZombieCache> zombieCaches;
  private final List<OpenHandle> oldestOpen;
  private final long openCacheCapacityBytes;
  private final long zombieCacheCapacityBytes;
  private final long sitesDropped;

  HandleReport(boolean agentActive, String options, Map<String, Object> json) {
    this.agentActive = agentActive;
    this.options = options;
    List<KindCount> kinds = new ArrayList<>();
    for (Map<String, Object> k : list(json, "kinds")) {
      kinds.add(new KindCount(k));
    }
    List<Site> sites = new ArrayList<>();
    for (Map<String, Object> s : list(json, "sites")) {
      sites.add(new Site(s));
    }
    List<ZombieCache> zombies = new ArrayList<>();
    for (Map<String, Object> z : list(json, "zombie_caches")) {
      zombies.add(new ZombieCache(z));
    }
    this.kinds = Collections.unmodifiableList(kinds);
    this.sites = Collections.unmodifiableList(sites);
    this.zombieCaches = Collections.unmodifiableList(zombies);
    List<OpenHandle> oldest = new ArrayList<>();
    for (Map<String, Object> o : list(json, "oldest_open")) {
      oldest.add(new OpenHandle(o));
    }
    this.oldestOpen = Collections.unmodifiableList(oldest);
    this.openCacheCapacityBytes = Json.number(json, "open_cache_capacity_bytes");
    this.zombieCacheCapacityBytes = Json.number(json, "zombie_cache_capacity_bytes");
    this.sitesDropped = Json.number(json, "sites_dropped");
  }

  @SuppressWarnings("unchecked")
  static List<Map<String, Object>> list(Map<String, Object> json, String key) {
    Object value = json.get(key);
    if (!(value instanceof List)) {
      throw new NativeMemoryException("native JSON lacks list '" + key + "': " + json);
    }
    return (List<Map<String, Object>>) value;
  }

  public boolean agentActive() {
    return agentActive;
  }

  public List<KindCount> kinds() {
    return kinds;
  }

  /** Counts of one kind, or all zeros if none was seen. */
  public KindCount kind(String kind) {
    for (KindCount k : kinds) {
      if (k.kind.equals(kind)) {
        return k;
      }
    }
    Map<String, Object> zero = new LinkedHashMap<>();
    zero.put("kind", kind);
    for (String key : new String[] {"created", "closed", "transferred", "open", "leaked"}) {
      zero.put(key, 0L);
    }
    return new KindCount(zero);
  }

  /** Open and leaked handles per kind and creation site, most first. */
  public List<Site> sites() {
    return sites;
  }

  public List<ZombieCache> zombieCaches() {
    return zombieCaches;
  }

  /** The oldest open handles (at most 50), each with address, thread and creation time. */
  public List<OpenHandle> oldestOpen() {
    return oldestOpen;
  }

  /** Total capacity of the RocksDB caches whose Java object is open. */
  public long openCacheCapacityBytes() {
    return openCacheCapacityBytes;
  }

  /** Total capacity of the zombie caches: closed in Java, still alive natively. */
  public long zombieCacheCapacityBytes() {
    return zombieCacheCapacityBytes;
  }

  /** Creation stacks not kept because the table of sites was full. */
  public long sitesDropped() {
    return sitesDropped;
  }

  public String toJson() {
    Map<String, Object> json = new LinkedHashMap<>();
    json.put("agent_active", agentActive);
    json.put("options", options);
    List<Object> kindList = new ArrayList<>();
    for (KindCount k : kinds) {
      kindList.add(k.toMap());
    }
    json.put("kinds", kindList);
    List<Object> siteList = new ArrayList<>();
    for (Site s : sites) {
      siteList.add(s.toMap());
    }
    json.put("sites", siteList);
    List<Object> zombieList = new ArrayList<>();
    for (ZombieCache z : zombieCaches) {
      zombieList.add(z.toMap());
    }
    json.put("zombie_caches", zombieList);
    List<Object> openList = new ArrayList<>();
    for (OpenHandle o : oldestOpen) {
      openList.add(o.toMap());
    }
    json.put("oldest_open", openList);
    json.put("open_cache_capacity_bytes", openCacheCapacityBytes);
    json.put("zombie_cache_capacity_bytes", zombieCacheCapacityBytes);
    json.put("sites_dropped", sitesDropped);
    return Json.write(json);
  }

  @Override
  public String toString() {
    StringBuilder out = new StringBuilder();
    out.append("Native handles (agent ")
        .append(agentActive ? "active, " + options : "not attached: only track()ed handles")
        .append(")\n");
    out.append(
        String.format(
            "  %-28s %10s %10s %12s %8s %8s%n",
            "kind", "created", "closed", "transferred", "open", "leaked"));
    for (KindCount k : kinds) {
      out.append(
          String.format(
              "  %-28s %10d %10d %12d %8d %8d%n",
              k.kind, k.created, k.closed, k.transferred, k.open, k.leaked));
    }
    if (!sites.isEmpty()) {
      out.append("Open and leaked handles by creation site:\n");
      for (Site s : sites) {
        String line = CreationSites.applicationFrame(s.stack);
        out.append(
            String.format(
                "  %d leaked, %d open %s%s%n",
                s.leaked, s.open, s.kind, line == null ? "" : ", created at " + line));
        out.append(indent(s.stack, "    "));
      }
    }
    if (openCacheCapacityBytes > 0 || zombieCacheCapacityBytes > 0) {
      out.append(
          String.format(
              "Cache capacity: %s in open caches, %s in zombie caches%n",
              ByteFormat.human(openCacheCapacityBytes),
              ByteFormat.human(zombieCacheCapacityBytes)));
    }
    if (!zombieCaches.isEmpty()) {
      out.append("Zombie caches (closed in Java, still held natively by options):\n");
      for (ZombieCache z : zombieCaches) {
        String cacheLine = CreationSites.applicationFrame(z.cacheStack);
        out.append(
            String.format(
                "  %s of %s capacity, created at %s, closed in Java%n",
                z.cacheKind,
                ByteFormat.human(z.capacityBytes),
                cacheLine == null ? "(site not recorded)" : cacheLine));
        for (Retainer r : z.retainers) {
          String line = CreationSites.applicationFrame(r.stack);
          out.append(
              String.format(
                  "    retained by %s (%s), created at %s%n",
                  r.kind, r.state, line == null ? "(site not recorded)" : line));
          out.append(indent(r.stack, "        "));
        }
      }
    }
    if (!oldestOpen.isEmpty()) {
      out.append("Oldest open handles:\n");
      for (OpenHandle o : oldestOpen.subList(0, Math.min(10, oldestOpen.size()))) {
        out.append("  ").append(o).append('\n');
      }
    }
    if (sitesDropped > 0) {
      out.append(sitesDropped).append(" creation stacks not kept: the table of sites is full\n");
    }
    return out.toString();
  }

  private static String indent(String stack, String prefix) {
    StringBuilder out = new StringBuilder();
    for (String line : stack.split("\n")) {
      if (!line.trim().isEmpty()) {
        out.append(prefix).append(line.trim()).append('\n');
      }
    }
    return out.toString();
  }

  /** Counts of one kind of handle since the JVM started. */
  public static final class KindCount {
    private final String kind;
    private final long created;
    private final long closed;
    private final long transferred;
    private final long open;
    private final long leaked;

    KindCount(Map<String, Object> json) {
      this.kind = Json.string(json, "kind");
      this.created = Json.number(json, "created");
      this.closed = Json.number(json, "closed");
      this.transferred = Json.number(json, "transferred");
      this.open = Json.number(json, "open");
      this.leaked = Json.number(json, "leaked");
    }

    public String kind() {
      return kind;
    }

    public long created() {
      return created;
    }

    public long closed() {
      return closed;
    }

    public long transferred() {
      return transferred;
    }

    public long open() {
      return open;
    }

    public long leaked() {
      return leaked;
    }

    Map<String, Object> toMap() {
      Map<String, Object> m = new LinkedHashMap<>();
      m.put("kind", kind);
      m.put("created", created);
      m.put("closed", closed);
      m.put("transferred", transferred);
      m.put("open", open);
      m.put("leaked", leaked);
      return m;
    }

    @Override
    public String toString() {
      return kind + " " + Json.write(toMap());
    }
  }

  /** Open and leaked handles of one kind created at one site. */
  public static final class Site {
    private final String kind;
    private final long open;
    private final long leaked;
    private final String stack;

    Site(Map<String, Object> json) {
      this.kind = Json.string(json, "kind");
      this.open = Json.number(json, "open");
      this.leaked = Json.number(json, "leaked");
      this.stack = Json.string(json, "stack");
    }

    public String kind() {
      return kind;
    }

    public long open() {
      return open;
    }

    public long leaked() {
      return leaked;
    }

    /** The creation stack, one {@code at} frame a line, or a note saying why none was kept. */
    public String stack() {
      return stack;
    }

    Map<String, Object> toMap() {
      Map<String, Object> m = new LinkedHashMap<>();
      m.put("kind", kind);
      m.put("open", open);
      m.put("leaked", leaked);
      m.put("stack", stack);
      return m;
    }

    @Override
    public String toString() {
      return leaked + " leaked, " + open + " open " + kind + "\n" + stack;
    }
  }

  /** A cache whose Java object was closed while options objects still keep it alive natively. */
  public static final class ZombieCache {
    private final String cacheKind;
    private final long capacityBytes;
    private final String cacheStack;
    private final List<Retainer> retainers;

    ZombieCache(Map<String, Object> json) {
      this.cacheKind = Json.string(json, "cache_kind");
      this.capacityBytes = Json.number(json, "capacity_bytes");
      this.cacheStack = Json.string(json, "cache_site");
      List<Retainer> retainers = new ArrayList<>();
      for (Map<String, Object> r : list(json, "retainers")) {
        retainers.add(new Retainer(r));
      }
      this.retainers = Collections.unmodifiableList(retainers);
    }

    public String cacheKind() {
      return cacheKind;
    }

    public long capacityBytes() {
      return capacityBytes;
    }

    public String cacheStack() {
      return cacheStack;
    }

    public List<Retainer> retainers() {
      return retainers;
    }

    Map<String, Object> toMap() {
      Map<String, Object> m = new LinkedHashMap<>();
      m.put("cache_kind", cacheKind);
      m.put("capacity_bytes", capacityBytes);
      m.put("cache_site", cacheStack);
      List<Object> list = new ArrayList<>();
      for (Retainer r : retainers) {
        list.add(r.toMap());
      }
      m.put("retainers", list);
      return m;
    }

    @Override
    public String toString() {
      return cacheKind + " " + ByteFormat.human(capacityBytes) + " retained by " + retainers;
    }
  }

  /** An open or leaked options object that keeps a zombie cache alive. */
  public static final class Retainer {
    private final String kind;
    private final String state;
    private final String stack;

    Retainer(Map<String, Object> json) {
      this.kind = Json.string(json, "kind");
      this.state = Json.string(json, "state");
      this.stack = Json.string(json, "site");
    }

    public String kind() {
      return kind;
    }

    /** {@code open} or {@code leaked}. */
    public String state() {
      return state;
    }

    public String stack() {
      return stack;
    }

    Map<String, Object> toMap() {
      Map<String, Object> m = new LinkedHashMap<>();
      m.put("kind", kind);
      m.put("state", state);
      m.put("site", stack);
      return m;
    }

    @Override
    public String toString() {
      return kind + " (" + state + ")";
    }
  }

  /** One open handle: what, where in native memory, which thread made it and when. */
  public static final class OpenHandle {
    private final String kind;
    private final long address;
    private final String thread;
    private final long createdEpochMillis;

    OpenHandle(Map<String, Object> json) {
      this.kind = Json.string(json, "kind");
      this.address = Json.number(json, "address");
      this.thread = Json.string(json, "thread");
      this.createdEpochMillis = Json.number(json, "created_epoch_ms");
    }

    public String kind() {
      return kind;
    }

    /** The native handle (RocksDB) or zlib stream address; 0 where the object has none. */
    public long address() {
      return address;
    }

    public String thread() {
      return thread;
    }

    public long createdEpochMillis() {
      return createdEpochMillis;
    }

    Map<String, Object> toMap() {
      Map<String, Object> m = new LinkedHashMap<>();
      m.put("kind", kind);
      m.put("address", address);
      m.put("thread", thread);
      m.put("created_epoch_ms", createdEpochMillis);
      return m;
    }

    @Override
    public String toString() {
      return String.format(
          "%s at 0x%x, thread '%s', created %s",
          kind, address, thread, java.time.Instant.ofEpochMilli(createdEpochMillis));
    }
  }
}
