package dev.nativemem.memory;

import dev.nativemem.handles.HandleReport;
import dev.nativemem.internal.ByteFormat;
import dev.nativemem.internal.Json;
import dev.nativemem.internal.JsonBinding;
import dev.nativemem.memory.reading.ContainerMemory;
import dev.nativemem.memory.reading.NmtSummary;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
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

  final View view;
  final ContainerMemory container;
  final BreakdownParts.Cpus cpus;
  final ProcessMemory process;
  final BreakdownParts.Jvm jvm;
  final BreakdownParts.Allocator allocator;
  final BreakdownParts.Handles handles;
  final List<Part> attributed;
  final long rssBytes;
  final long attributedBytes;
  final long unaccountedBytes;
  final Long limitBytes;
  final Long headroomBytes;

  /** The full handle report or its summary; the JSON's {@code handles} holds its counts. */
  final transient HandleReport handleReport;

  /**
   * Built by {@link MemoryBreakdownReader} from the native library's view ({@code nativeView}), the
   * JVM's figures ({@code jvm}, with the heap's and the code cache's resident bytes, null in the
   * committed view or where not found), NMT's summary ({@code nmt}, null when off) and the handle
   * report: this value reads nothing.
   */
  MemoryBreakdown(
      Map<String, Object> nativeView,
      BreakdownParts.Jvm jvm,
      Long heapResidentBytes,
      Long codeCacheResidentBytes,
      NmtSummary nmt,
      HandleReport handles,
      View view) {
    this.view = view;
    this.container =
        nativeView.get("container_memory") == null
            ? null
            : JsonBinding.read(ContainerMemory.class, Json.object(nativeView, "container_memory"));
    this.cpus =
        JsonBinding.read(BreakdownParts.Cpus.class, Json.object(nativeView, "container_cpus"));
    this.process = JsonBinding.read(ProcessMemory.class, Json.object(nativeView, "process"));
    this.jvm = jvm;
    this.allocator =
        JsonBinding.read(BreakdownParts.Allocator.class, Json.object(nativeView, "allocator"));
    this.handleReport = handles;
    this.handles = new BreakdownParts.Handles(handles);
    this.attributed =
        Collections.unmodifiableList(attribute(nmt, heapResidentBytes, codeCacheResidentBytes));
    this.rssBytes = process.rssBytes();
    this.attributedBytes = attributed.stream().mapToLong(Part::bytes).sum();
    this.unaccountedBytes = rssBytes - attributedBytes;
    this.limitBytes = container == null ? null : container.limitBytes();
    this.headroomBytes = limitBytes == null ? null : limitBytes - container.usageBytes();
  }

  private List<Part> attribute(NmtSummary nmt, Long heapResident, Long codeResident) {
    List<Part> parts = new ArrayList<>();
    Long jvmMapped = nmt == null ? null : nmtMappedOutsideFiles(nmt);
    if (view == View.RESIDENT) {
      attributeJvmResident(parts, nmt, jvmMapped, heapResident, codeResident);
    } else if (jvmMapped != null) {
      parts.add(new Part("jvm_mmap_committed_nmt", "JVM mappings (NMT mmap committed)", jvmMapped));
    } else {
      parts.add(new Part("java_heap_committed", "Java heap (committed)", jvm.heapCommittedBytes));
      parts.add(
          new Part(
              "non_heap_committed", "non-heap pools (committed)", jvm.nonHeapCommittedBytes()));
    }
    long allocated = allocator.allocatedBytes;
    parts.add(
        new Part("malloc_allocated", "malloc'd (" + allocator.kind + " allocated)", allocated));
    parts.add(
        new Part(
            "allocator_overhead",
            allocator.kind.equals("jemalloc")
                ? "jemalloc fragmentation, dirty pages, metadata"
                : "glibc free chunks in arenas",
            Math.max(0, allocator.footprintBytes - allocated)));
    parts.add(
        new Part(
            "file_and_shmem_resident",
            "file-backed and shared pages",
            process.rssFileBytes() + process.rssShmemBytes()));
    // Tracked handles own memory inside "malloc'd" above: they explain it, they are no extra part.
    return parts;
  }

  /**
   * The heap and code cache by resident pages; the rest of the JVM's mappings (metaspace, thread
   * stacks) at their committed size, which they mostly touch. GC structures (card tables, mark
   * bitmaps: about a tenth of a G1 heap) are committed with the heap and touched only as it fills,
   * and nothing says which of their pages are resident: they are left out, so whatever of them is
   * resident stays in "unaccounted".
   */
  private void attributeJvmResident(
      List<Part> parts, NmtSummary nmt, Long jvmMapped, Long heapResident, Long codeResident) {
    if (heapResident != null) {
      parts.add(new Part("java_heap_resident", "Java heap (resident)", heapResident));
    } else {
      parts.add(
          new Part(
              "java_heap_used",
              "Java heap (used; its pages are not found for this collector)",
              jvm.heapUsedBytes));
    }
    long codePools =
        jvm.nonHeapPools.stream()
            .filter(BreakdownParts.MemoryPool::isCodeCache)
            .mapToLong(p -> p.committedBytes)
            .sum();
    if (codeResident != null) {
      parts.add(new Part("code_cache_resident", "code cache (resident)", codeResident));
    }
    if (jvmMapped != null) {
      Map<String, Long> mapped = nmt.mmapCommittedByCategory();
      long measuredOrLeftOut =
          mapped.getOrDefault("Java Heap", jvm.heapCommittedBytes)
              + (codeResident == null ? 0 : mapped.getOrDefault("Code", codePools))
              + mapped.getOrDefault("GC", 0L);
      parts.add(
          new Part(
              "jvm_other_mmap_committed_nmt",
              "other JVM mappings (NMT committed: metaspace, threads; not GC)",
              jvmMapped - measuredOrLeftOut));
    } else {
      long nonHeap = jvm.nonHeapCommittedBytes() - (codeResident == null ? 0 : codePools);
      parts.add(
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
    return Optional.ofNullable(limitBytes);
  }

  /** Memory the cgroup is charged for now (page cache included). */
  public Optional<Long> cgroupUsageBytes() {
    return container == null ? Optional.empty() : Optional.of(container.usageBytes());
  }

  /** {@code limit − cgroup usage}; empty without a limit. */
  public Optional<Long> headroomBytes() {
    return Optional.ofNullable(headroomBytes);
  }

  /** OOM kills the cgroup reports (v2 {@code memory.events}, v1 {@code memory.oom_control}). */
  public Optional<Long> oomKills() {
    return container == null ? Optional.empty() : Optional.ofNullable(container.oomKillEvents());
  }

  /** CPUs the container grants, as the JVM computes them. */
  public int containerCpus() {
    return (int) cpus.effective;
  }

  // ---- the process and the JVM

  public long rssBytes() {
    return rssBytes;
  }

  public long threads() {
    return process.threads();
  }

  /** Anonymous resident memory (RssAnon). */
  public long rssAnonBytes() {
    return process.rssAnonBytes();
  }

  /** File-backed resident memory (RssFile). */
  public long rssFileBytes() {
    return process.rssFileBytes();
  }

  public long heapCommittedBytes() {
    return jvm.heapCommittedBytes;
  }

  /** Committed bytes of the non-heap memory pools (metaspace, class space, code cache). */
  public long nonHeapCommittedBytes() {
    return jvm.nonHeapCommittedBytes();
  }

  /** The direct buffer pool's memory ({@code ByteBuffer.allocateDirect}). */
  public long directBufferBytes() {
    return jvm.bufferPools.stream()
        .filter(p -> p.name.equals("direct"))
        .mapToLong(p -> p.usedBytes)
        .sum();
  }

  /** NMT's committed total; empty when NMT is off. */
  public Optional<Long> nmtCommittedBytes() {
    return jvm.nmt == null ? Optional.empty() : Optional.of(jvm.nmt.committedBytes);
  }

  /** What NMT counts as the JVM's own {@code malloc}; empty when NMT is off or does not say. */
  public Optional<Long> nmtMallocBytes() {
    return jvm.nmt == null ? Optional.empty() : Optional.ofNullable(jvm.nmt.mallocBytes);
  }

  // ---- the allocator

  /** {@code jemalloc} or {@code glibc}. */
  public String allocatorKind() {
    return allocator.kind;
  }

  public long allocatorAllocatedBytes() {
    return allocator.allocatedBytes;
  }

  /** What the allocator holds from the system: jemalloc's resident, glibc's arenas and chunks. */
  public long allocatorFootprintBytes() {
    return allocator.footprintBytes;
  }

  /** jemalloc's resident bytes; empty on glibc, which does not count them. */
  public Optional<Long> allocatorResidentBytes() {
    return Optional.ofNullable(allocator.residentBytes);
  }

  /** Unused dirty pages jemalloc holds; empty on glibc. */
  public Optional<Long> allocatorDirtyBytes() {
    return Optional.ofNullable(allocator.dirtyBytes);
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
    return handleReport;
  }

  // ---- the attribution

  /** The parts of RSS with a known owner. */
  public List<Part> attributed() {
    return attributed;
  }

  public long attributedBytes() {
    return attributedBytes;
  }

  /**
   * {@code RSS − attributed}: native memory no view accounts for. In the committed view, negative
   * while committed JVM memory is not yet touched.
   */
  public long unaccountedBytes() {
    return unaccountedBytes;
  }

  /** How JVM memory was counted. */
  public View view() {
    return view;
  }

  /** The breakdown as JSON: its fields are the keys ({@link JsonBinding}). */
  public String toJson() {
    return JsonBinding.write(this);
  }

  /** An aligned table: bytes in MiB/GiB and, when there is a limit, percent of it. */
  @Override
  public String toString() {
    return MemoryBreakdownText.of(this);
  }

  /** One attributed part of RSS. */
  public static final class Part {
    private final String name;
    private final long bytes;

    /** For people: what the part is, in words. */
    final transient String label;

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
}
