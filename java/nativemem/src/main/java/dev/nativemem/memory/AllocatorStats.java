package dev.nativemem.memory;

import dev.nativemem.internal.ByteFormat;
import dev.nativemem.internal.Json;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;

/**
 * Statistics of the allocator that serves {@code malloc}, labelled by kind so glibc figures are
 * never read as jemalloc's. jemalloc's are read after advancing {@code epoch}.
 */
public final class AllocatorStats {
  private final Map<String, Object> json;
  private final AllocatorInfo.Kind kind;
  private final Jemalloc jemalloc;
  private final Glibc glibc;

  AllocatorStats(Map<String, Object> json) {
    this.json = json;
    this.kind = AllocatorInfo.Kind.valueOf(Json.string(json, "kind").toUpperCase(Locale.ROOT));
    this.jemalloc = kind == AllocatorInfo.Kind.JEMALLOC ? new Jemalloc(json) : null;
    this.glibc = kind == AllocatorInfo.Kind.GLIBC ? new Glibc(json) : null;
  }

  public AllocatorInfo.Kind kind() {
    return kind;
  }

  /** Bytes the application holds through {@code malloc}, whichever allocator serves it. */
  public long allocatedBytes() {
    return Json.number(json, "allocated_bytes");
  }

  /** jemalloc's statistics; empty under glibc. */
  public Optional<Jemalloc> jemalloc() {
    return Optional.ofNullable(jemalloc);
  }

  /** glibc's statistics; empty under jemalloc. */
  public Optional<Glibc> glibc() {
    return Optional.ofNullable(glibc);
  }

  public String toJson() {
    return Json.write(json);
  }

  @Override
  public String toString() {
    return jemalloc != null ? jemalloc.toString() : glibc.toString();
  }

  /** jemalloc's totals and arenas, in bytes. */
  public static final class Jemalloc {
    private final Map<String, Object> json;
    private final List<Arena> arenas = new ArrayList<>();

    Jemalloc(Map<String, Object> json) {
      this.json = json;
      for (Map<String, Object> arena : Json.objects(json, "arenas")) {
        arenas.add(new Arena(arena));
      }
    }

    /** {@code stats.allocated}. */
    public long allocatedBytes() {
      return Json.number(json, "allocated_bytes");
    }

    /** {@code stats.active}: pages holding application data. */
    public long activeBytes() {
      return Json.number(json, "active_bytes");
    }

    /** {@code stats.resident}: physically resident pages jemalloc maps, metadata included. */
    public long residentBytes() {
      return Json.number(json, "resident_bytes");
    }

    /** {@code stats.mapped}. */
    public long mappedBytes() {
      return Json.number(json, "mapped_bytes");
    }

    /** {@code stats.retained}: virtual memory kept for reuse, not resident. */
    public long retainedBytes() {
      return Json.number(json, "retained_bytes");
    }

    /** {@code stats.metadata}. */
    public long metadataBytes() {
      return Json.number(json, "metadata_bytes");
    }

    /** Unused dirty pages of all arenas: resident memory that a purge returns. */
    public long dirtyBytes() {
      return Json.number(json, "dirty_bytes");
    }

    /** Unused muzzy pages of all arenas. */
    public long muzzyBytes() {
      return Json.number(json, "muzzy_bytes");
    }

    /** {@code (active − allocated) / active}. */
    public double fragmentation() {
      return Json.decimal(json, "fragmentation");
    }

    public List<Arena> arenas() {
      return Collections.unmodifiableList(arenas);
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
    private final Map<String, Object> json;

    Arena(Map<String, Object> json) {
      this.json = json;
    }

    public int index() {
      return (int) Json.number(json, "index");
    }

    /** Threads bound to this arena now. */
    public int threads() {
      return (int) Json.number(json, "threads");
    }

    public long dirtyPages() {
      return Json.number(json, "dirty_pages");
    }

    public long muzzyPages() {
      return Json.number(json, "muzzy_pages");
    }

    public long smallAllocatedBytes() {
      return Json.number(json, "small_allocated_bytes");
    }

    public long largeAllocatedBytes() {
      return Json.number(json, "large_allocated_bytes");
    }
  }

  /** glibc's {@code mallinfo2} and what {@code malloc_info} adds, in bytes. */
  public static final class Glibc {
    private final Map<String, Object> json;

    Glibc(Map<String, Object> json) {
      this.json = json;
    }

    /** {@code uordblks + hblkhd}. */
    public long allocatedBytes() {
      return Json.number(json, "allocated_bytes");
    }

    /** {@code arena}: bytes from {@code sbrk} and arena heaps. */
    public long arenaBytes() {
      return Json.number(json, "arena_bytes");
    }

    /** {@code hblkhd}: bytes in chunks served by {@code mmap}. */
    public long mmapBytes() {
      return Json.number(json, "mmap_bytes");
    }

    /** {@code uordblks}: bytes held in arena chunks. */
    public long inUseBytes() {
      return Json.number(json, "in_use_bytes");
    }

    /** {@code fordblks}: free bytes inside arenas, resident until trimmed or reused. */
    public long freeBytes() {
      return Json.number(json, "free_bytes");
    }

    /** {@code keepcost}: releasable bytes at the top of the main heap. */
    public long releasableBytes() {
      return Json.number(json, "releasable_bytes");
    }

    /** Arenas counted in {@code malloc_info}; empty if it could not be read. */
    public Optional<Long> arenaCount() {
      return Optional.ofNullable(Json.optionalNumber(json, "arena_count"));
    }

    /** {@code MALLOC_ARENA_MAX} from the environment. */
    public Optional<String> mallocArenaMax() {
      Object v = json.get("malloc_arena_max");
      return v instanceof String ? Optional.of((String) v) : Optional.empty();
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
