package dev.nativemem.handles;

import dev.nativemem.base.text.TerminalText;
import dev.nativemem.handles.catalogue.LeakCatalogue;
import dev.nativemem.internal.ByteFormat;
import dev.nativemem.internal.JsonBinding;
import java.time.Instant;
import java.util.Collections;
import java.util.List;
import java.util.Map;

/**
 * Native handles of this JVM: counts per kind, open and leaked handles per creation site, and
 * zombie caches. Immutable; {@link #toString()} for people, {@link #toJson()} for machines.
 *
 * <p>This value and its nested ones are bound by {@link JsonBinding} to the registry's report (the
 * {@code handles_report} job), their fields being its keys and, in the same order, those of {@link
 * #toJson()}. The fields marked {@link JsonBinding.Added} are what only the Java side knows: {@link
 * HandleReportReader} sets them after binding.
 */
public final class HandleReport {
  /** The {@code schema} of {@link #toJson()}: its name and version. */
  public static final String SCHEMA = "nativemem-handle-report/1";

  /** {@link #SCHEMA}, the first key of {@link #toJson()}: set by its initializer. */
  @JsonBinding.Added String schema = SCHEMA;

  @JsonBinding.Added boolean agentActive;
  @JsonBinding.Added String options;
  List<KindCount> kinds;
  List<Site> sites;
  List<ZombieCache> zombieCaches;
  List<OpenHandle> oldestOpen;
  long openCacheCapacityBytes;
  long zombieCacheCapacityBytes;
  long sitesDropped;
  long sitesKept;

  /** The registry's part when bound; the reader adds the Java-side maps' memory. */
  long trackerMemoryBytes;

  /** Bound by {@link JsonBinding}: the fields are the keys of the registry's report. */
  private HandleReport() {}

  /**
   * Counts per kind and cache capacities from the registry's summary, and nothing listed: no site,
   * zombie cache or open handle, and no memory of the tracker counted.
   */
  static HandleReport of(HandleSummary summary) {
    HandleReport report = new HandleReport();
    report.kinds = summary.kinds;
    report.sites = Collections.emptyList();
    report.zombieCaches = Collections.emptyList();
    report.oldestOpen = Collections.emptyList();
    report.openCacheCapacityBytes = summary.openCacheCapacityBytes;
    report.zombieCacheCapacityBytes = summary.zombieCacheCapacityBytes;
    return report;
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
    return KindCount.none(kind);
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
    return JsonBinding.write(this);
  }

  @Override
  public String toString() {
    return HandleReportText.of(this);
  }

  /** Counts of one kind of handle since the JVM started. */
  public static final class KindCount {
    String kind;
    long created;
    long closed;
    long transferred;
    long open;
    long pooled;
    long leaked;
    @JsonBinding.Added List<String> classes;

    private KindCount() {}

    /** A kind none of which was seen: all zeros. */
    static KindCount none(String kind) {
      KindCount none = new KindCount();
      none.kind = kind;
      none.classes = Collections.emptyList();
      return none;
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

    @Override
    public String toString() {
      return kind + " " + JsonBinding.write(this);
    }
  }

  /**
   * Open, pooled and leaked handles of one kind created at one site (for pooled ones, the "site" is
   * the note naming the pool).
   */
  public static final class Site {
    String kind;
    long open;
    long pooled;
    long leaked;
    long freedByFinalizer;

    /** Null when no finalizer freed one (and so not written). */
    Long lastFreedByFinalizerEpochMs;

    @JsonBinding.Added String createdAt;
    @JsonBinding.Added String knownLeak;

    /** {@link #match} as the report file carries it: {@link LeakCatalogue.Match#toMap()}. */
    @JsonBinding.Added Map<String, Object> known;

    @JsonBinding.Added String accepted;

    /** The registry's creation stack when bound; the reader rewrites it to {@code at} frames. */
    String stack;

    /** The catalogue's known leak these handles are, or null. */
    transient LeakCatalogue.Match match;

    private Site() {}

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
      return match == null ? null : match.entry().id();
    }

    /** For a known leak: what it costs and what to do until the fixed version; else null. */
    public String knownLeakAdvice() {
      return match == null ? null : match.advice();
    }

    /** One line: counts, kind, where created, and what is known about it. */
    public String headline() {
      StringBuilder line = new StringBuilder();
      line.append(leaked).append(" leaked");
      if (freedByFinalizer > 0) {
        line.append(" (")
            .append(freedByFinalizer)
            .append(" freed by the finalizer, last at ")
            .append(Instant.ofEpochMilli(lastFreedByFinalizerEpochMs))
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
        boolean upstream = match == null || !match.library().equals(LeakCatalogue.YOUR_CODE);
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

    @Override
    public String toString() {
      return TerminalText.escape(headline() + "\n" + stack);
    }
  }

  /** A cache whose Java object was closed while options objects still keep it alive natively. */
  public static final class ZombieCache {
    String cacheKind;
    long capacityBytes;
    @JsonBinding.Added String cacheCreatedAt;

    /** The cache's creation stack: the registry's when bound, then rewritten to frames. */
    String cacheSite;

    List<Retainer> retainers;

    private ZombieCache() {}

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
      return cacheSite;
    }

    public List<Retainer> retainers() {
      return retainers;
    }

    @Override
    public String toString() {
      return cacheKind + " " + ByteFormat.human(capacityBytes) + " retained by " + retainers;
    }
  }

  /** An open or leaked options object that keeps a zombie cache alive. */
  public static final class Retainer {
    String kind;
    String state;
    @JsonBinding.Added String createdAt;

    /** The retainer's creation stack: the registry's when bound, then rewritten to frames. */
    String site;

    private Retainer() {}

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
      return site;
    }

    @Override
    public String toString() {
      return kind + " (" + state + ")";
    }
  }

  /** One open handle: what, where in native memory, which thread made it and when. */
  public static final class OpenHandle {
    String kind;
    long address;
    String thread;
    long createdEpochMs;

    private OpenHandle() {}

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
      return createdEpochMs;
    }

    @Override
    public String toString() {
      return TerminalText.escape(
          String.format(
              "%s at 0x%x, thread '%s', created %s",
              kind, address, thread, Instant.ofEpochMilli(createdEpochMs)));
    }
  }
}
