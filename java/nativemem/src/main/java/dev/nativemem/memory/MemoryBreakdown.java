package dev.nativemem.memory;

import dev.nativemem.handles.HandleReport;
import dev.nativemem.internal.ByteFormat;
import dev.nativemem.internal.Json;
import dev.nativemem.memory.reading.NmtSummary;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;

/**
 * The views that disagree in an incident, side by side: the container's memory cgroup, the kernel's
 * RSS, the JVM's heap, pools, buffers and NMT, and the allocator. RSS is split into parts
 * attributed to a known owner and the unaccounted remainder: {@code rss = attributed +
 * unaccounted}.
 *
 * <p>In the {@link View#RESIDENT} view (the default) the Java heap and the code cache count their
 * resident pages, so a young JVM's committed but untouched heap is not mistaken for memory: the
 * remainder stays at or above zero up to what is counted but not touched yet (committed metaspace,
 * large malloc'd blocks: a few MiB). The {@link View#COMMITTED} view counts JVM memory at its
 * committed size, as NMT and the memory pools do: cheaper, and its remainder is negative in a young
 * JVM.
 */
public final class MemoryBreakdown {
  /** How JVM memory is counted. */
  public enum View {
    /** The heap and code cache by their resident pages ({@code mincore} over their ranges). */
    RESIDENT,
    /** JVM memory at its committed size. */
    COMMITTED
  }

  final Map<String, Object> process;
  final Map<String, Object> container;
  final Map<String, Object> cpus;
  final Map<String, Object> allocator;
  final long heapUsedBytes;
  final long heapCommittedBytes;
  final long heapMaxBytes;
  final List<Pool> nonHeapPools = new ArrayList<>();
  final List<Pool> bufferPools = new ArrayList<>();
  final NmtSummary nmt;

  /** Why NMT's figures are absent (off, or no diagnostic commands here), or null. */
  final String nmtAbsence;

  /** Why the JVM's memory and buffer pools are absent, or null. */
  final String poolsAbsence;

  final HandleReport handles;
  final List<Part> attributed = new ArrayList<>();
  final View view;

  /**
   * Built by {@link MemoryBreakdownReader}, which reads the JVM's figures: this value reads
   * nothing.
   */
  MemoryBreakdown(
      Map<String, Object> nativeView,
      JvmMemory jvm,
      NmtSummary nmt,
      HandleReport handles,
      View view) {
    this.view = view;
    this.process = Json.object(nativeView, "process");
    this.container = Json.optionalObject(nativeView, "container_memory");
    this.cpus = Json.object(nativeView, "container_cpus");
    this.allocator = Json.object(nativeView, "allocator");
    this.heapUsedBytes = jvm.heapUsedBytes;
    this.heapCommittedBytes = jvm.heapCommittedBytes;
    this.heapMaxBytes = jvm.heapMaxBytes;
    this.poolsAbsence = jvm.poolsAbsence;
    this.nonHeapPools.addAll(jvm.nonHeapPools);
    this.bufferPools.addAll(jvm.bufferPools);
    this.nmt = nmt;
    this.nmtAbsence = nmt == null ? NmtSummary.absence() : null;
    this.handles = handles;
    attribute(jvm);
  }

  private void attribute(JvmMemory jvm) {
    Long jvmMapped = nmt == null ? null : nmtMappedOutsideFiles(nmt);
    if (view == View.RESIDENT) {
      attributeJvmResident(jvmMapped, jvm.heapResidentBytes, jvm.codeCacheResidentBytes);
    } else if (jvmMapped != null) {
      attributed.add(
          new Part("jvm_mmap_committed_nmt", "JVM mappings (NMT mmap committed)", jvmMapped));
    } else {
      attributed.add(new Part("java_heap_committed", "Java heap (committed)", heapCommittedBytes));
      attributed.add(
          new Part("non_heap_committed", "non-heap pools (committed)", nonHeapCommittedBytes()));
    }
    long allocated = Json.number(allocator, "allocated_bytes");
    attributed.add(
        new Part("malloc_allocated", "malloc'd (" + allocatorKind() + " allocated)", allocated));
    attributed.add(
        new Part(
            "allocator_overhead",
            allocatorKind().equals("jemalloc")
                ? "jemalloc fragmentation, dirty pages, metadata"
                : "glibc free chunks in arenas",
            Math.max(0, Json.number(allocator, "footprint_bytes") - allocated)));
    attributed.add(
        new Part(
            "file_and_shmem_resident",
            "file-backed and shared pages",
            Json.number(process, "rss_file_bytes") + Json.number(process, "rss_shmem_bytes")));
    // Tracked handles own memory inside "malloc'd" above: they explain it, they are no extra part.
  }

  /**
   * The heap and code cache by resident pages; the rest of the JVM's mappings (metaspace, thread
   * stacks) at their committed size, which they mostly touch. GC structures (card tables, mark
   * bitmaps: about a tenth of a G1 heap) are committed with the heap and touched only as it fills,
   * and nothing says which of their pages are resident: they are left out, so whatever of them is
   * resident stays in "unaccounted".
   */
  private void attributeJvmResident(Long jvmMapped, Long heapResident, Long codeResident) {
    if (heapResident != null) {
      attributed.add(new Part("java_heap_resident", "Java heap (resident)", heapResident));
    } else {
      attributed.add(
          new Part(
              "java_heap_used",
              "Java heap (used; its pages are not found for this collector)",
              heapUsedBytes));
    }
    long codePools =
        nonHeapPools.stream()
            .filter(p -> p.name.startsWith("CodeHeap") || p.name.equals("Code Cache"))
            .mapToLong(Pool::capacityOrCommittedBytes)
            .sum();
    if (codeResident != null) {
      attributed.add(new Part("code_cache_resident", "code cache (resident)", codeResident));
    }
    if (jvmMapped != null) {
      Map<String, Long> mapped = nmt.mmapCommittedByCategory();
      long measuredOrLeftOut =
          mapped.getOrDefault("Java Heap", heapCommittedBytes)
              + (codeResident == null ? 0 : mapped.getOrDefault("Code", codePools))
              + mapped.getOrDefault("GC", 0L);
      attributed.add(
          new Part(
              "jvm_other_mmap_committed_nmt",
              "other JVM mappings (NMT committed: metaspace, threads; not GC)",
              jvmMapped - measuredOrLeftOut));
    } else {
      long nonHeap =
          nonHeapPools.stream().mapToLong(Pool::capacityOrCommittedBytes).sum()
              - (codeResident == null ? 0 : codePools);
      attributed.add(
          new Part("non_heap_committed", "other non-heap pools (committed: metaspace)", nonHeap));
    }
  }

  /** NMT's mapped commitment minus the CDS archive, which RSS counts as file-backed pages. */
  private static Long nmtMappedOutsideFiles(NmtSummary nmt) {
    Long mapped = nmt.mmapCommittedBytes();
    if (mapped == null && nmt.mallocBytes() != null) {
      mapped = nmt.committedBytes() - nmt.mallocBytes();
    }
    if (mapped == null) {
      return null;
    }
    return mapped - nmt.committedByCategory().getOrDefault("Shared class space", 0L);
  }

  // ---- the container

  /** The lowest memory limit from this process's cgroup up its hierarchy; empty if unlimited. */
  public Optional<Long> limitBytes() {
    return container == null
        ? Optional.empty()
        : Optional.ofNullable(Json.optionalNumber(container, "limit_bytes"));
  }

  /** Memory the cgroup is charged for now (page cache included). */
  public Optional<Long> cgroupUsageBytes() {
    return container == null
        ? Optional.empty()
        : Optional.of(Json.number(container, "usage_bytes"));
  }

  /** {@code limit − cgroup usage}; empty without a limit. */
  public Optional<Long> headroomBytes() {
    return limitBytes().flatMap(limit -> cgroupUsageBytes().map(usage -> limit - usage));
  }

  /** OOM kills the cgroup reports (v2 {@code memory.events}, v1 {@code memory.oom_control}). */
  public Optional<Long> oomKills() {
    return container == null
        ? Optional.empty()
        : Optional.ofNullable(Json.optionalNumber(container, "oom_kill_events"));
  }

  /** CPUs the container grants, as the JVM computes them. */
  public int containerCpus() {
    return (int) Json.number(cpus, "effective");
  }

  // ---- the process and the JVM

  public long rssBytes() {
    return Json.number(process, "rss_bytes");
  }

  public long threads() {
    return Json.number(process, "threads");
  }

  /** Anonymous resident memory (RssAnon). */
  public long rssAnonBytes() {
    return Json.number(process, "rss_anon_bytes");
  }

  /** File-backed resident memory (RssFile). */
  public long rssFileBytes() {
    return Json.number(process, "rss_file_bytes");
  }

  public long heapCommittedBytes() {
    return heapCommittedBytes;
  }

  /** Committed bytes of the non-heap memory pools (metaspace, class space, code cache). */
  public long nonHeapCommittedBytes() {
    return nonHeapPools.stream().mapToLong(Pool::capacityOrCommittedBytes).sum();
  }

  /** The direct buffer pool's memory ({@code ByteBuffer.allocateDirect}). */
  public long directBufferBytes() {
    return bufferPools.stream()
        .filter(p -> p.name.equals("direct"))
        .mapToLong(p -> p.usedBytes)
        .sum();
  }

  /** NMT's committed total; empty when NMT is off. */
  public Optional<Long> nmtCommittedBytes() {
    return nmt == null ? Optional.empty() : Optional.of(nmt.committedBytes());
  }

  /** What NMT counts as the JVM's own {@code malloc}; empty when NMT is off or does not say. */
  public Optional<Long> nmtMallocBytes() {
    return nmt == null ? Optional.empty() : Optional.ofNullable(nmt.mallocBytes());
  }

  // ---- the allocator

  /** {@code jemalloc} or {@code glibc}. */
  public String allocatorKind() {
    return Json.string(allocator, "kind");
  }

  public long allocatorAllocatedBytes() {
    return Json.number(allocator, "allocated_bytes");
  }

  /** What the allocator holds from the system: jemalloc's resident, glibc's arenas and chunks. */
  public long allocatorFootprintBytes() {
    return Json.number(allocator, "footprint_bytes");
  }

  /** jemalloc's resident bytes; empty on glibc, which does not count them. */
  public Optional<Long> allocatorResidentBytes() {
    return Optional.ofNullable(Json.optionalNumber(allocator, "resident_bytes"));
  }

  /** Unused dirty pages jemalloc holds; empty on glibc. */
  public Optional<Long> allocatorDirtyBytes() {
    return Optional.ofNullable(Json.optionalNumber(allocator, "dirty_bytes"));
  }

  // ---- tracked native handles

  /**
   * Open and leaked native handles by kind, and the capacity of the RocksDB caches they hold. Their
   * memory is part of the allocator's allocated bytes; this says who holds it. In a {@link
   * MemorySnapshot} it is the full {@code NativeHandles.report()}, sites included (the metrics read
   * their leaks per site from it, so a reading asks the registry once); in a breakdown of its own
   * ({@code NativeMemory.breakdown()}) the cheaper {@code NativeHandles.summary()}, whose lists of
   * sites, zombie caches and open handles are empty.
   */
  public HandleReport handles() {
    return handles;
  }

  // ---- the attribution

  /** The parts of RSS with a known owner. */
  public List<Part> attributed() {
    return Collections.unmodifiableList(attributed);
  }

  public long attributedBytes() {
    return attributed.stream().mapToLong(Part::bytes).sum();
  }

  /**
   * {@code RSS − attributed}: native memory no view accounts for. In the committed view, negative
   * while committed JVM memory is not yet touched.
   */
  public long unaccountedBytes() {
    return rssBytes() - attributedBytes();
  }

  /** How JVM memory was counted. */
  public View view() {
    return view;
  }

  public String toJson() {
    Map<String, Object> json = new LinkedHashMap<>();
    json.put("view", view.name().toLowerCase(Locale.ROOT));
    json.put("container", container);
    json.put("cpus", cpus);
    json.put("process", process);
    Map<String, Object> jvm = new LinkedHashMap<>();
    jvm.put("heap_used_bytes", heapUsedBytes);
    jvm.put("heap_committed_bytes", heapCommittedBytes);
    jvm.put("heap_max_bytes", heapMaxBytes);
    if (view == View.RESIDENT) {
      jvm.put("heap_ranges", rangesJson(JvmRegions.heapRanges()));
      jvm.put("code_cache_ranges", rangesJson(JvmRegions.codeCacheRanges()));
    }
    jvm.put("non_heap_pools", pools(nonHeapPools));
    jvm.put("buffer_pools", pools(bufferPools));
    Map<String, Object> nmtJson = null;
    if (nmt != null) {
      nmtJson = new LinkedHashMap<>();
      nmtJson.put("reserved_bytes", nmt.reservedBytes());
      nmtJson.put("committed_bytes", nmt.committedBytes());
      nmtJson.put("malloc_bytes", nmt.mallocBytes());
      nmtJson.put("mmap_committed_bytes", nmt.mmapCommittedBytes());
    }
    jvm.put("nmt", nmtJson);
    Map<String, Object> absent = new LinkedHashMap<>();
    if (nmtAbsence != null) {
      absent.put("nmt", nmtAbsence);
    }
    if (poolsAbsence != null) {
      absent.put("memory_pools", poolsAbsence);
    }
    jvm.put("absent", absent);
    json.put("jvm", jvm);
    json.put("allocator", allocator);
    json.put("handles", handlesJson());
    List<Object> parts = new ArrayList<>();
    for (Part part : attributed) {
      Map<String, Object> p = new LinkedHashMap<>();
      p.put("name", part.name);
      p.put("bytes", part.bytes);
      parts.add(p);
    }
    json.put("attributed", parts);
    json.put("rss_bytes", rssBytes());
    json.put("attributed_bytes", attributedBytes());
    json.put("unaccounted_bytes", unaccountedBytes());
    json.put("limit_bytes", limitBytes().orElse(null));
    json.put("headroom_bytes", headroomBytes().orElse(null));
    return Json.write(json);
  }

  private Map<String, Object> handlesJson() {
    Map<String, Object> json = new LinkedHashMap<>();
    json.put("agent_active", handles.agentActive());
    List<Object> kinds = new ArrayList<>();
    for (HandleReport.KindCount kind : handles.kinds()) {
      Map<String, Object> k = new LinkedHashMap<>();
      k.put("kind", kind.kind());
      k.put("open", kind.open());
      k.put("leaked", kind.leaked());
      kinds.add(k);
    }
    json.put("kinds", kinds);
    json.put("open_cache_capacity_bytes", handles.openCacheCapacityBytes());
    json.put("zombie_cache_capacity_bytes", handles.zombieCacheCapacityBytes());
    return json;
  }

  /** {@code [[start, end], ...]} as unsigned hex text ({@code 0x…}). */
  private static List<Object> rangesJson(List<long[]> ranges) {
    List<Object> out = new ArrayList<>();
    for (long[] range : ranges) {
      out.add(List.of("0x" + Long.toHexString(range[0]), "0x" + Long.toHexString(range[1])));
    }
    return out;
  }

  private static List<Object> pools(List<Pool> pools) {
    List<Object> out = new ArrayList<>();
    for (Pool pool : pools) {
      Map<String, Object> p = new LinkedHashMap<>();
      p.put("name", pool.name);
      if (pool.count >= 0) {
        p.put("count", pool.count);
      }
      p.put("used_bytes", pool.usedBytes);
      p.put(pool.count >= 0 ? "capacity_bytes" : "committed_bytes", pool.capacityOrCommitted);
      out.add(p);
    }
    return out;
  }

  /** An aligned table: bytes in MiB/GiB and, when there is a limit, percent of it. */
  @Override
  public String toString() {
    return MemoryBreakdownText.of(this);
  }

  /** One attributed part of RSS. */
  public static final class Part {
    private final String name;
    final String label;
    private final long bytes;

    Part(String name, String label, long bytes) {
      this.name = name;
      this.label = label;
      this.bytes = bytes;
    }

    /** A stable snake_case key, as in the JSON. */
    public String name() {
      return name;
    }

    public long bytes() {
      return bytes;
    }

    @Override
    public String toString() {
      return label + " " + ByteFormat.human(bytes);
    }
  }

  static final class Pool {
    final String name;
    final long count;
    final long usedBytes;
    final long capacityOrCommitted;

    Pool(String name, long count, long usedBytes, long capacityOrCommitted) {
      this.name = name;
      this.count = count;
      this.usedBytes = usedBytes;
      this.capacityOrCommitted = capacityOrCommitted;
    }

    long capacityOrCommittedBytes() {
      return capacityOrCommitted;
    }
  }
}
