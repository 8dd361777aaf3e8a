package dev.nativemem.memory;

import dev.nativemem.internal.ByteFormat;
import dev.nativemem.internal.Json;
import dev.nativemem.internal.JsonBinding;
import java.lang.invoke.VarHandle;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;

/**
 * Statistics of the allocator that serves {@code malloc}, labelled by kind so glibc figures are
 * never read as jemalloc's. jemalloc's are read after advancing {@code epoch}.
 *
 * <p>The native library writes one flat object: {@code kind}, then the keys of {@link Jemalloc} or
 * of {@link Glibc}, whichever it names.
 */
public final class AllocatorStats {
  private AllocatorInfo.Kind kind;
  private transient Jemalloc jemalloc;
  private transient Glibc glibc;

  /** Bound by {@link JsonBinding}: the fields are the keys of the native library's JSON. */
  private AllocatorStats() {}

  /** The statistics of {@code json} (the {@code allocator_stats} job's). */
  static AllocatorStats of(Map<String, Object> json) {
    AllocatorStats stats = JsonBinding.read(AllocatorStats.class, json);
    if (stats.kind == AllocatorInfo.Kind.JEMALLOC) {
      stats.jemalloc = JsonBinding.read(Jemalloc.class, json);
    } else {
      stats.glibc = JsonBinding.read(Glibc.class, json);
    }
    VarHandle.releaseFence(); // publishes the allocator's part as the binding's fence does kind
    return stats;
  }

  public AllocatorInfo.Kind kind() {
    return kind;
  }

  /** Bytes the application holds through {@code malloc}, whichever allocator serves it. */
  public long allocatedBytes() {
    return jemalloc != null ? jemalloc.allocatedBytes : glibc.allocatedBytes;
  }

  /** jemalloc's statistics; empty under glibc. */
  public Optional<Jemalloc> jemalloc() {
    return Optional.ofNullable(jemalloc);
  }

  /** glibc's statistics; empty under jemalloc. */
  public Optional<Glibc> glibc() {
    return Optional.ofNullable(glibc);
  }

  /** The flat object the native library wrote: {@code kind}, then the allocator's keys. */
  public String toJson() {
    Map<String, Object> json = JsonBinding.toMap(this);
    json.putAll(JsonBinding.toMap(jemalloc != null ? jemalloc : glibc));
    return Json.writeWithNulls(json);
  }

  @Override
  public String toString() {
    return jemalloc != null ? jemalloc.toString() : glibc.toString();
  }

  /** jemalloc's totals and arenas, in bytes. */
  public static final class Jemalloc {
    private long allocatedBytes;
    private long activeBytes;
    private long residentBytes;
    private long mappedBytes;
    private long retainedBytes;
    private long metadataBytes;
    private long dirtyBytes;
    private long muzzyBytes;
    private double fragmentation;
    private List<Arena> arenas;

    /** Bound by {@link JsonBinding}: the fields are the keys of the native library's JSON. */
    private Jemalloc() {}

    /** {@code stats.allocated}. */
    public long allocatedBytes() {
      return allocatedBytes;
    }

    /** {@code stats.active}: pages holding application data. */
    public long activeBytes() {
      return activeBytes;
    }

    /** {@code stats.resident}: physically resident pages jemalloc maps, metadata included. */
    public long residentBytes() {
      return residentBytes;
    }

    /** {@code stats.mapped}. */
    public long mappedBytes() {
      return mappedBytes;
    }

    /** {@code stats.retained}: virtual memory kept for reuse, not resident. */
    public long retainedBytes() {
      return retainedBytes;
    }

    /** {@code stats.metadata}. */
    public long metadataBytes() {
      return metadataBytes;
    }

    /** Unused dirty pages of all arenas: resident memory that a purge returns. */
    public long dirtyBytes() {
      return dirtyBytes;
    }

    /** Unused muzzy pages of all arenas. */
    public long muzzyBytes() {
      return muzzyBytes;
    }

    /** {@code (active − allocated) / active}. */
    public double fragmentation() {
      return fragmentation;
    }

    public List<Arena> arenas() {
      return arenas;
    }

    @Override
    public String toString() {
      StringBuilder out = new StringBuilder("jemalloc (stats after epoch advance)\n");
      row(out, "allocated", allocatedBytes());
      row(out, "active", activeBytes());
      row(out, "resident", residentBytes());
      row(out, "mapped", mappedBytes());
      row(out, "retained", retainedBytes());
      row(out, "metadata", metadataBytes());
      row(out, "dirty (unused)", dirtyBytes());
      row(out, "muzzy (unused)", muzzyBytes());
      out.append(
          String.format(Locale.ROOT, "  %-16s %10.1f%%%n", "fragmentation", fragmentation() * 100));
      out.append(
          String.format(
              Locale.ROOT,
              "  %-6s %7s %11s %11s %11s %11s%n",
              "arena",
              "threads",
              "dirty",
              "muzzy",
              "small",
              "large"));
      for (Arena a : arenas) {
        out.append(
            String.format(
                Locale.ROOT,
                "  %-6d %7d %11d %11d %11s %11s%n",
                a.index(),
                a.threads(),
                a.dirtyPages(),
                a.muzzyPages(),
                ByteFormat.human(a.smallAllocatedBytes()),
                ByteFormat.human(a.largeAllocatedBytes())));
      }
      out.append("  (dirty and muzzy in pages)");
      return out.toString();
    }
  }

  /** One initialized jemalloc arena. */
  public static final class Arena {
    private int index;
    private int threads;
    private long dirtyPages;
    private long muzzyPages;
    private long smallAllocatedBytes;
    private long largeAllocatedBytes;

    /** Bound by {@link JsonBinding}: the fields are the keys of the native library's JSON. */
    private Arena() {}

    public int index() {
      return index;
    }

    /** Threads bound to this arena now. */
    public int threads() {
      return threads;
    }

    public long dirtyPages() {
      return dirtyPages;
    }

    public long muzzyPages() {
      return muzzyPages;
    }

    public long smallAllocatedBytes() {
      return smallAllocatedBytes;
    }

    public long largeAllocatedBytes() {
      return largeAllocatedBytes;
    }
  }

  /** glibc's {@code mallinfo2} and what {@code malloc_info} adds, in bytes. */
  public static final class Glibc {
    private long arenaBytes;
    private long mmapBytes;
    private long allocatedBytes;
    private long inUseBytes;
    private long freeBytes;
    private long releasableBytes;
    private Long arenaCount;
    private String mallocArenaMax;

    /** Bound by {@link JsonBinding}: the fields are the keys of the native library's JSON. */
    private Glibc() {}

    /** {@code uordblks + hblkhd}. */
    public long allocatedBytes() {
      return allocatedBytes;
    }

    /** {@code arena}: bytes from {@code sbrk} and arena heaps. */
    public long arenaBytes() {
      return arenaBytes;
    }

    /** {@code hblkhd}: bytes in chunks served by {@code mmap}. */
    public long mmapBytes() {
      return mmapBytes;
    }

    /** {@code uordblks}: bytes held in arena chunks. */
    public long inUseBytes() {
      return inUseBytes;
    }

    /** {@code fordblks}: free bytes inside arenas, resident until trimmed or reused. */
    public long freeBytes() {
      return freeBytes;
    }

    /** {@code keepcost}: releasable bytes at the top of the main heap. */
    public long releasableBytes() {
      return releasableBytes;
    }

    /** Arenas counted in {@code malloc_info}; empty if it could not be read. */
    public Optional<Long> arenaCount() {
      return Optional.ofNullable(arenaCount);
    }

    /** {@code MALLOC_ARENA_MAX} from the environment. */
    public Optional<String> mallocArenaMax() {
      return Optional.ofNullable(mallocArenaMax);
    }

    @Override
    public String toString() {
      StringBuilder out = new StringBuilder("glibc malloc (mallinfo2; no jemalloc statistics)\n");
      row(out, "allocated", allocatedBytes());
      row(out, "arena (sbrk+heaps)", arenaBytes());
      row(out, "mmapped chunks", mmapBytes());
      row(out, "in use in arenas", inUseBytes());
      row(out, "free in arenas", freeBytes());
      row(out, "releasable (top)", releasableBytes());
      out.append(
          String.format(
              Locale.ROOT,
              "  %-18s %10s%n",
              "arenas",
              arenaCount().map(String::valueOf).orElse("unknown")));
      out.append(
          String.format(
              Locale.ROOT,
              "  %-18s %10s",
              "MALLOC_ARENA_MAX",
              mallocArenaMax().orElse("unset (8 per core)")));
      return out.toString();
    }
  }

  private static void row(StringBuilder out, String label, long bytes) {
    out.append(String.format(Locale.ROOT, "  %-18s %10s%n", label, ByteFormat.human(bytes)));
  }
}
