package dev.nativemem.metrics;

import dev.nativemem.handles.HandleReport;
import dev.nativemem.memory.AllocatorStats;
import dev.nativemem.memory.MemoryBreakdown;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;

/**
 * The metrics nativemem publishes: one table that Micrometer, Flink and the MXBean all read, so
 * their names and values cannot drift. Each metric has a Micrometer-style name, a base unit, a
 * description, its tag keys, and the way its value is taken from one {@link NativeMemoryMetrics}
 * reading.
 *
 * <p>A figure that does not exist in this process is <b>absent</b> from the reading (never -1 and
 * never a pretended 0):
 *
 * <ul>
 *   <li>{@code active}, {@code resident}, {@code retained}, {@code dirty}: jemalloc only;
 *   <li>{@code allocator.arenas}: under glibc only when {@code malloc_info} could be read;
 *   <li>{@code container.*}: without a memory cgroup; {@code limit} and {@code headroom} also
 *       without a limit;
 *   <li>{@code handles.*}: for kinds never seen (without the agent only {@code track()}ed kinds are
 *       seen); {@code cache.capacity}: without the agent.
 * </ul>
 *
 * <p>{@code unaccounted} may be negative (see {@link MemoryBreakdown#unaccountedBytes()}).
 */
public enum NativeMemoryMetric {
  ALLOCATOR_ALLOCATED(
      "nativemem.allocator.allocated",
      Unit.BYTES,
      "Bytes the application holds through malloc (jemalloc stats.allocated; glibc in-use chunks"
          + " plus mmap'd chunks)",
      Tags.ALLOCATOR,
      (s, out) -> out.allocator(s.stats().allocatedBytes())),
  ALLOCATOR_ACTIVE(
      "nativemem.allocator.active",
      Unit.BYTES,
      "Bytes in pages holding application data (jemalloc stats.active)",
      Tags.ALLOCATOR,
      (s, out) -> s.stats().jemalloc().ifPresent(j -> out.allocator(j.activeBytes()))),
  ALLOCATOR_RESIDENT(
      "nativemem.allocator.resident",
      Unit.BYTES,
      "Physically resident bytes jemalloc maps, metadata included (stats.resident)",
      Tags.ALLOCATOR,
      (s, out) -> s.stats().jemalloc().ifPresent(j -> out.allocator(j.residentBytes()))),
  ALLOCATOR_MAPPED(
      "nativemem.allocator.mapped",
      Unit.BYTES,
      "Bytes the allocator maps from the system (jemalloc stats.mapped; glibc arena plus mmap'd"
          + " chunks)",
      Tags.ALLOCATOR,
      (s, out) -> {
        if (s.stats().jemalloc().isPresent()) {
          out.allocator(s.stats().jemalloc().get().mappedBytes());
        } else {
          s.stats().glibc().ifPresent(g -> out.allocator(g.arenaBytes() + g.mmapBytes()));
        }
      }),
  ALLOCATOR_RETAINED(
      "nativemem.allocator.retained",
      Unit.BYTES,
      "Virtual memory jemalloc keeps for reuse, not resident (stats.retained)",
      Tags.ALLOCATOR,
      (s, out) -> s.stats().jemalloc().ifPresent(j -> out.allocator(j.retainedBytes()))),
  ALLOCATOR_DIRTY(
      "nativemem.allocator.dirty",
      Unit.BYTES,
      "Unused dirty pages of jemalloc's arenas: resident memory a purge returns",
      Tags.ALLOCATOR,
      (s, out) -> s.stats().jemalloc().ifPresent(j -> out.allocator(j.dirtyBytes()))),
  ALLOCATOR_ARENAS(
      "nativemem.allocator.arenas",
      null,
      "Arenas of the allocator (jemalloc: initialized arenas; glibc: arenas in malloc_info)",
      Tags.ALLOCATOR,
      (s, out) -> {
        if (s.stats().jemalloc().isPresent()) {
          out.allocator(s.stats().jemalloc().get().arenas().size());
        } else {
          s.stats().glibc().flatMap(AllocatorStats.Glibc::arenaCount).ifPresent(out::allocator);
        }
      }),
  PROCESS_RSS(
      "nativemem.process.rss",
      Unit.BYTES,
      "Resident set size of the process (VmRSS)",
      Tags.NONE,
      (s, out) -> out.value(s.breakdown().rssBytes())),
  PROCESS_RSS_ANON(
      "nativemem.process.rss.anon",
      Unit.BYTES,
      "Anonymous resident memory (RssAnon): where malloc'd memory and the Java heap live",
      Tags.NONE,
      (s, out) -> out.value(s.breakdown().rssAnonBytes())),
  PROCESS_RSS_FILE(
      "nativemem.process.rss.file",
      Unit.BYTES,
      "File-backed resident memory (RssFile)",
      Tags.NONE,
      (s, out) -> out.value(s.breakdown().rssFileBytes())),
  CONTAINER_LIMIT(
      "nativemem.container.limit",
      Unit.BYTES,
      "The lowest memory limit of the process's cgroup and its ancestors",
      Tags.NONE,
      (s, out) -> s.breakdown().limitBytes().ifPresent(out::value)),
  CONTAINER_USAGE(
      "nativemem.container.usage",
      Unit.BYTES,
      "Memory the cgroup is charged for, page cache included",
      Tags.NONE,
      (s, out) -> s.breakdown().cgroupUsageBytes().ifPresent(out::value)),
  CONTAINER_HEADROOM(
      "nativemem.container.headroom",
      Unit.BYTES,
      "Container limit minus cgroup usage: what is left before the OOM killer",
      Tags.NONE,
      (s, out) -> s.breakdown().headroomBytes().ifPresent(out::value)),
  JVM_HEAP_COMMITTED(
      "nativemem.jvm.heap.committed",
      Unit.BYTES,
      "Java heap committed",
      Tags.NONE,
      (s, out) -> out.value(s.breakdown().heapCommittedBytes())),
  JVM_NONHEAP_COMMITTED(
      "nativemem.jvm.nonheap.committed",
      Unit.BYTES,
      "Committed bytes of the JVM's non-heap memory pools (metaspace, code cache)",
      Tags.NONE,
      (s, out) -> out.value(s.breakdown().nonHeapCommittedBytes())),
  JVM_DIRECT_BUFFERS(
      "nativemem.jvm.direct.buffers",
      Unit.BYTES,
      "Memory of direct byte buffers (ByteBuffer.allocateDirect)",
      Tags.NONE,
      (s, out) -> out.value(s.breakdown().directBufferBytes())),
  UNACCOUNTED(
      "nativemem.unaccounted",
      Unit.BYTES,
      "RSS minus every attributed part, JVM memory by resident pages: native memory no view"
          + " accounts for",
      Tags.NONE,
      (s, out) -> out.value(s.breakdown().unaccountedBytes())),
  HANDLES_OPEN(
      "nativemem.handles.open",
      null,
      "Open native handles (RocksDB objects, zlib streams, tracked resources) per kind",
      Tags.KIND,
      (s, out) -> {
        for (HandleReport.KindCount k : s.handles().kinds()) {
          out.value(k.open(), k.kind());
        }
      }),
  HANDLES_LEAKED(
      "nativemem.handles.leaked",
      null,
      Type.COUNTER,
      "Native handles garbage-collected while still owning native memory since the JVM started,"
          + " per kind and known leak of the catalogue (known=none for the rest)",
      Tags.KIND_KNOWN,
      (s, out) -> leakedByKnownEntry(s.handles(), out)),
  CACHE_CAPACITY(
      "nativemem.cache.capacity",
      Unit.BYTES,
      "Capacity of RocksDB block caches: open, or zombie (closed in Java, kept alive natively)",
      Tags.STATE,
      (s, out) -> {
        if (s.handles().agentActive()) {
          out.value(s.handles().openCacheCapacityBytes(), "open");
          out.value(s.handles().zombieCacheCapacityBytes(), "zombie");
        }
      }),
  PROFILING_READY(
      "nativemem.profiling.ready",
      null,
      "1 when heap profiling can run in this process (either engine), else 0",
      Tags.NONE,
      (s, out) -> out.value(s.profilingAvailable() ? 1 : 0)),
  PROFILING_ACTIVE(
      "nativemem.profiling.active",
      null,
      "1 when heap profiling samples allocations now (either engine), else 0",
      Tags.NONE,
      (s, out) -> out.value(s.profilingActive() ? 1 : 0)),
  EXPORT_SENT(
      "nativemem.export.sent",
      null,
      Type.COUNTER,
      "Profiles the continuous export delivered to its endpoint (nativemem.export)",
      Tags.NONE,
      (s, out) -> out.value(dev.nativemem.export.ProfileExporter.sent())),
  EXPORT_DROPPED(
      "nativemem.export.dropped",
      null,
      Type.COUNTER,
      "Profiles the continuous export never delivered: pushed out of its full queue while the"
          + " endpoint was slow or down, or refused after every retry",
      Tags.NONE,
      (s, out) -> out.value(dev.nativemem.export.ProfileExporter.dropped()));

  /** The {@code known} tag of leaked handles that match no catalogue entry. */
  public static final String NO_KNOWN_LEAK = "none";

  /**
   * What a metric's value does over time, as Prometheus and Micrometer type it. A {@link #COUNTER}
   * only grows while the JVM lives (alert on its {@code increase()}, never on {@code > 0}, which
   * would not clear); a {@link #GAUGE} goes up and down.
   */
  public enum Type {
    GAUGE,
    COUNTER
  }

  /** Base units used by the table. */
  private static final class Unit {
    /** Micrometer's and Prometheus's name for bytes. */
    public static final String BYTES = "bytes";

    private Unit() {}
  }

  private static final class Tags {
    static final List<String> NONE = Collections.emptyList();
    static final List<String> ALLOCATOR = Collections.singletonList("allocator");
    static final List<String> KIND = Collections.singletonList("kind");
    static final List<String> KIND_KNOWN =
        Collections.unmodifiableList(Arrays.asList("kind", "known"));
    static final List<String> STATE = Collections.singletonList("state");
  }

  private final String metricName;
  private final String baseUnit;
  private final Type type;
  private final String description;
  private final List<String> tagKeys;
  private final Reader reader;

  NativeMemoryMetric(
      String metricName, String baseUnit, String description, List<String> tagKeys, Reader reader) {
    this(metricName, baseUnit, Type.GAUGE, description, tagKeys, reader);
  }

  NativeMemoryMetric(
      String metricName,
      String baseUnit,
      Type type,
      String description,
      List<String> tagKeys,
      Reader reader) {
    this.metricName = metricName;
    this.baseUnit = baseUnit;
    this.type = type;
    this.description = description;
    this.tagKeys = tagKeys;
    this.reader = reader;
  }

  /** The Micrometer name, dot-separated lower case, such as {@code nativemem.process.rss}. */
  public String metricName() {
    return metricName;
  }

  /** {@code "bytes"}, or empty for counts and 1/0 flags. */
  public Optional<String> baseUnit() {
    return Optional.ofNullable(baseUnit);
  }

  /** A gauge, or a counter that only grows while the JVM lives. */
  public Type type() {
    return type;
  }

  public String description() {
    return description;
  }

  /** The tag keys each measurement of this metric carries, in this order. */
  public List<String> tagKeys() {
    return tagKeys;
  }

  /**
   * The series name Prometheus shows, as micrometer-registry-prometheus derives it: dots to
   * underscores, the base unit as suffix ({@code nativemem_process_rss_bytes}) and {@code _total}
   * after a counter's ({@code nativemem_handles_leaked_total}).
   */
  public String prometheusName() {
    String name = metricName.replace('.', '_').toLowerCase(Locale.ROOT);
    name = baseUnit == null ? name : name + "_" + baseUnit;
    return type == Type.COUNTER ? name + "_total" : name;
  }

  void read(Sources sources, Emitter out) {
    reader.read(sources, out);
  }

  /** What a reading is made of: one snapshot (breakdown with handles, stats) and profiling. */
  interface Sources {
    MemoryBreakdown breakdown();

    AllocatorStats stats();

    HandleReport handles();

    boolean profilingAvailable();

    boolean profilingActive();
  }

  /** Receives a metric's measurements, tag values in the order of {@link #tagKeys()}. */
  interface Emitter {
    void value(double value, String... tagValues);

    /** A measurement tagged with the allocator's kind. */
    void allocator(double value);
  }

  /**
   * Per kind: the leaked handles of sites matching a catalogue entry under that entry's id, the
   * rest of the kind's leaked count under {@code none} (sites whose stack was not kept, unmatched
   * sites). The sites of a report may count more leaks than their kind's total (seen with Spring
   * Boot's nested-jar streams: 30 leaked at the reader's site, 10 in the kind's count): then the
   * series of the kind add up to more than its total, and {@code none} is 0. {@code none} is the
   * kind's total minus the matched sites, so it may step down when a site is matched later; a
   * Prometheus counter that steps down reads as a restart, and {@code increase()} counts the new
   * value again: the alerts group by {@code known}, and a step of {@code none} is a leak of that
   * kind all the same.
   */
  private static void leakedByKnownEntry(HandleReport handles, Emitter out) {
    for (HandleReport.KindCount kind : handles.kinds()) {
      Map<String, Long> known = new TreeMap<>();
      for (HandleReport.Site site : handles.sites()) {
        if (site.kind().equals(kind.kind()) && site.knownLeakId() != null && site.leaked() > 0) {
          known.merge(site.knownLeakId(), site.leaked(), Long::sum);
        }
      }
      long matched = known.values().stream().mapToLong(Long::longValue).sum();
      out.value(Math.max(0, kind.leaked() - matched), kind.kind(), NO_KNOWN_LEAK);
      known.forEach((id, count) -> out.value(count, kind.kind(), id));
    }
  }

  @FunctionalInterface
  private interface Reader {
    void read(Sources sources, Emitter out);
  }
}
