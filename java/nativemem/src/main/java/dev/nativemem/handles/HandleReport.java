package dev.nativemem.handles;

import dev.nativemem.NativeMemoryException;
import dev.nativemem.handles.catalogue.LeakCatalogue;
import dev.nativemem.internal.ByteFormat;
import dev.nativemem.internal.Json;
import dev.nativemem.internal.TerminalText;
import java.time.Instant;
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
  final boolean agentActive;
  final String options;
  final List<KindCount> kinds;
  final List<Site> sites;
  final List<ZombieCache> zombieCaches;
  final List<OpenHandle> oldestOpen;
  final long openCacheCapacityBytes;
  final long zombieCacheCapacityBytes;
  final long sitesDropped;
  final long sitesKept;
  final long trackerMemoryBytes;

  /** The {@code schema} of {@link #toJson()}: its name and version. */
  public static final String SCHEMA = "nativemem-handle-report/1";

  HandleReport(
      boolean agentActive, String options, Map<String, Object> json, long javaMemoryBytes) {
    this.agentActive = agentActive;
    this.options = options;
    List<KindCount> kinds = new ArrayList<>();
    for (Map<String, Object> k : list(json, "kinds")) {
      if (!k.containsKey("classes")) {
        k.put("classes", HandleTracker.get().subclassesOf(Json.string(k, "kind")));
      }
      kinds.add(new KindCount(k));
    }
    List<Site> sites = new ArrayList<>();
    List<Map<String, Object>> siteJson = list(json, "sites");
    // Read only for sites: reading it loads the catalogue.
    List<KnownLeak> jvmWide =
        siteJson.isEmpty() ? Collections.emptyList() : KnownLeak.acceptedInThisJvm();
    for (Map<String, Object> s : siteJson) {
      sites.add(new Site(s, jvmWide));
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
    this.sitesKept = Json.number(json, "sites_kept");
    // The native registry's part, to which the Java side adds its own (0 for a report read back).
    this.trackerMemoryBytes = Json.number(json, "tracker_memory_bytes") + javaMemoryBytes;
  }

  /** {@code key} of {@code json} when set, else the headline of the creation stack {@code text}. */
  private static String headlineOf(Map<String, Object> json, String key, String text) {
    Object given = json.get(key);
    return given instanceof String ? (String) given : CreationSites.applicationFrame(text);
  }

  private static long numberOr(Map<String, Object> json, String key) {
    return json.get(key) instanceof Number ? ((Number) json.get(key)).longValue() : 0;
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
    for (String key :
        new String[] {"created", "closed", "transferred", "open", "pooled", "leaked"}) {
      zero.put(key, 0L);
    }
    zero.put("classes", Collections.emptyList());
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

  /** Distinct creation stacks kept now. */
  public long sitesKept() {
    return sitesKept;
  }

  /** Memory the tracker holds, about: native records, creation stacks and the Java-side maps. */
  public long trackerMemoryBytes() {
    return trackerMemoryBytes;
  }

  /**
   * The report as JSON, the agent's {@code report=...json} file: {@code schema} ({@value #SCHEMA})
   * first, so a reader of a kept file knows what it reads; the number changes when a key is renamed
   * or removed, not when one is added.
   */
  public String toJson() {
    return HandleReportJson.write(this);
  }

  @Override
  public String toString() {
    return HandleReportText.of(this);
  }

  /** Counts of one kind of handle since the JVM started. */
  public static final class KindCount {
    final String kind;
    final long created;
    final long closed;
    final long transferred;
    final long open;
    final long pooled;
    final long leaked;
    final List<String> classes;

    @SuppressWarnings("unchecked")
    KindCount(Map<String, Object> json) {
      this.kind = Json.string(json, "kind");
      this.created = Json.number(json, "created");
      this.closed = Json.number(json, "closed");
      this.transferred = Json.number(json, "transferred");
      this.open = Json.number(json, "open");
      this.pooled = json.containsKey("pooled") ? Json.number(json, "pooled") : 0;
      this.leaked = Json.number(json, "leaked");
      Object types = json.get("classes");
      List<String> names = new ArrayList<>();
      if (types instanceof List) {
        for (Object type : (List<Object>) types) {
          names.add(String.valueOf(type));
        }
      }
      this.classes = Collections.unmodifiableList(names);
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

    /** Open and owned by their user; pooled ones are in {@link #pooled()}. */
    public long open() {
      return open;
    }

    /** Open, resting in a pool (an {@code Inflater} in a zip file's cache). */
    public long pooled() {
      return pooled;
    }

    public long leaked() {
      return leaked;
    }

    /**
     * Classes from outside RocksDB counted as this RocksDB kind because they extend it (such as
     * Kafka Streams' options adapter, as {@code Options}).
     */
    public List<String> classes() {
      return classes;
    }

    Map<String, Object> toMap() {
      Map<String, Object> m = new LinkedHashMap<>();
      m.put("kind", kind);
      m.put("created", created);
      m.put("closed", closed);
      m.put("transferred", transferred);
      m.put("open", open);
      m.put("pooled", pooled);
      m.put("leaked", leaked);
      m.put("classes", classes);
      return m;
    }

    @Override
    public String toString() {
      return kind + " " + Json.write(toMap());
    }
  }

  /**
   * Open, pooled and leaked handles of one kind created at one site (for pooled ones, the "site" is
   * the note naming the pool).
   */
  public static final class Site {
    final String kind;
    final long open;
    final long pooled;
    final long leaked;
    final long freedByFinalizer;
    final long lastFreedByFinalizerEpochMillis;
    final String createdAt;
    final String stack;
    final String knownLeak;
    final LeakCatalogue.Match known;
    final String accepted;

    Site(Map<String, Object> json, List<KnownLeak> jvmWide) {
      this.kind = Json.string(json, "kind");
      this.open = Json.number(json, "open");
      this.pooled = numberOr(json, "pooled");
      this.leaked = Json.number(json, "leaked");
      this.freedByFinalizer = numberOr(json, "freed_by_finalizer");
      this.lastFreedByFinalizerEpochMillis = numberOr(json, "last_freed_by_finalizer_epoch_ms");
      String text = Json.string(json, "stack");
      this.createdAt = headlineOf(json, "created_at", text);
      this.stack = CreationSites.frames(text);
      this.known = LeakCatalogue.get().match(kind, text);
      this.knownLeak =
          json.get("known_leak") instanceof String
              ? (String) json.get("known_leak")
              : known == null ? null : known.label();
      this.accepted =
          json.get("accepted") instanceof String
              ? (String) json.get("accepted")
              : KnownLeak.acceptedReason(Collections.emptyList(), jvmWide, known, kind, text);
    }

    /**
     * Why these handles are accepted rather than reported as a leak to fix (the catalogue marks the
     * entry accepted, or {@code known=} accepts it in this JVM), or null.
     */
    public String accepted() {
      return accepted;
    }

    /** The first frame of application code, or null when none was recorded. */
    public String createdAt() {
      return createdAt;
    }

    /** Open handles of this site resting in a pool (the site then names the pool). */
    public long pooled() {
      return pooled;
    }

    /** Of the leaked ones, how many a finalizer freed later (rocksdbjni before 7). */
    public long freedByFinalizer() {
      return freedByFinalizer;
    }

    /**
     * When these handles are a leak of nativemem's catalogue: what it is, its id, the version you
     * run and where it is fixed; else null.
     */
    public String knownLeak() {
      return knownLeak;
    }

    /** The catalogue id of the known leak (such as {@code FLINK-39753}), or null. */
    public String knownLeakId() {
      return known == null ? null : known.entry().id();
    }

    /** For a known leak: what it costs and what to do until the fixed version; else null. */
    public String knownLeakAdvice() {
      return known == null ? null : known.advice();
    }

    /** One line: counts, kind, where created, and what is known about it. */
    public String headline() {
      StringBuilder line = new StringBuilder();
      line.append(leaked).append(" leaked");
      if (freedByFinalizer > 0) {
        line.append(" (")
            .append(freedByFinalizer)
            .append(" freed by the finalizer, last at ")
            .append(Instant.ofEpochMilli(lastFreedByFinalizerEpochMillis))
            .append(')');
      }
      line.append(", ").append(open).append(" open");
      if (pooled > 0) {
        line.append(", ").append(pooled).append(" pooled");
      }
      line.append(' ').append(kind);
      if (createdAt != null) {
        line.append(", created at ").append(createdAt);
      }
      if (knownLeak != null) {
        boolean upstream = known == null || !known.entry().library().equals("your code");
        line.append(upstream ? " [known upstream leak: " : " [known leak: ");
        line.append(knownLeak).append(']');
      }
      if (accepted != null) {
        String why = knownLeak == null ? accepted : accepted.replace(knownLeak, "");
        why = why.replaceFirst("^; ", "");
        line.append(why.isEmpty() ? " [accepted]" : " [accepted: " + why + "]");
      }
      return line.toString();
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
      m.put("pooled", pooled);
      m.put("leaked", leaked);
      m.put("freed_by_finalizer", freedByFinalizer);
      if (freedByFinalizer > 0) {
        m.put("last_freed_by_finalizer_epoch_ms", lastFreedByFinalizerEpochMillis);
      }
      m.put("created_at", createdAt);
      m.put("known_leak", knownLeak);
      m.put("known", known == null ? null : known.toMap());
      m.put("accepted", accepted);
      m.put("stack", stack);
      return m;
    }

    @Override
    public String toString() {
      return TerminalText.escape(headline() + "\n" + stack);
    }
  }

  /** A cache whose Java object was closed while options objects still keep it alive natively. */
  public static final class ZombieCache {
    final String cacheKind;
    final long capacityBytes;
    final String cacheCreatedAt;
    final String cacheStack;
    final List<Retainer> retainers;

    ZombieCache(Map<String, Object> json) {
      this.cacheKind = Json.string(json, "cache_kind");
      this.capacityBytes = Json.number(json, "capacity_bytes");
      String text = Json.string(json, "cache_site");
      this.cacheCreatedAt = headlineOf(json, "cache_created_at", text);
      this.cacheStack = CreationSites.frames(text);
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

    /** The first application frame of the cache's creation, or null when none was recorded. */
    public String cacheCreatedAt() {
      return cacheCreatedAt;
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
      m.put("cache_created_at", cacheCreatedAt);
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
    final String kind;
    final String state;
    final String createdAt;
    final String stack;

    Retainer(Map<String, Object> json) {
      this.kind = Json.string(json, "kind");
      this.state = Json.string(json, "state");
      String text = Json.string(json, "site");
      this.createdAt = headlineOf(json, "created_at", text);
      this.stack = CreationSites.frames(text);
    }

    /** The first application frame of the retainer's creation, or null when none was recorded. */
    public String createdAt() {
      return createdAt;
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
      m.put("created_at", createdAt);
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
    final String kind;
    final long address;
    final String thread;
    final long createdEpochMillis;

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
      return TerminalText.escape(
          String.format(
              "%s at 0x%x, thread '%s', created %s",
              kind, address, thread, java.time.Instant.ofEpochMilli(createdEpochMillis)));
    }
  }
}
