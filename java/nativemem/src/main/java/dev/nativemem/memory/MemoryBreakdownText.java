package dev.nativemem.memory;

import dev.nativemem.handles.HandleReport;
import dev.nativemem.internal.ByteFormat;
import dev.nativemem.memory.reading.ContainerMemory;
import java.util.Locale;
import java.util.Optional;

/** {@link MemoryBreakdown} as an aligned table for people: bytes in MiB/GiB, percent of limit. */
final class MemoryBreakdownText {
  private MemoryBreakdownText() {}

  static String of(MemoryBreakdown b) {
    Table t = new Table(b.limitBytes().orElse(null));
    ContainerMemory container = b.container;
    if (container != null) {
      t.section("Container (cgroup " + container.cgroupVersion() + " " + container.cgroup() + ")");
      String limitAt = container.limitCgroup();
      t.row("limit" + (limitAt == null ? " (none)" : " (set at " + limitAt + ")"), b.limitBytes());
      t.row("usage", b.cgroupUsageBytes());
      t.row("  anon", Optional.ofNullable(container.anonBytes()));
      t.row("  file (page cache)", Optional.ofNullable(container.fileBytes()));
      t.count("OOM events", container.oomEvents());
      t.count("OOM kills", container.oomKillEvents());
      t.count("failcnt (limit hits)", container.failcnt());
    } else {
      t.section("Container: no memory cgroup found");
    }
    BreakdownParts.Cpus cpus = b.cpus;
    t.text(
        "CPUs",
        b.containerCpus()
            + " (affinity "
            + cpus.affinity
            + (cpus.quotaMillicpus == null
                ? ", no quota)"
                : String.format(Locale.ROOT, ", quota %.2f)", cpus.quotaMillicpus / 1000.0)));
    ProcessMemory process = b.process;
    t.section("Process");
    t.row("RSS", Optional.of(b.rssBytes()));
    t.row("  anon", Optional.of(process.rssAnonBytes()));
    t.row("  file", Optional.of(process.rssFileBytes()));
    t.row("  shmem", Optional.of(process.rssShmemBytes()));
    t.count("threads", b.threads());
    BreakdownParts.Jvm jvm = b.jvm;
    t.section("JVM");
    t.row("heap used", Optional.of(jvm.heapUsedBytes));
    t.row("heap committed", Optional.of(jvm.heapCommittedBytes));
    t.row("heap max", Optional.of(jvm.heapMaxBytes));
    for (BreakdownParts.MemoryPool pool : jvm.nonHeapPools) {
      t.row(pool.name + " (committed)", Optional.of(pool.committedBytes));
    }
    for (BreakdownParts.BufferPool pool : jvm.bufferPools) {
      if (pool.count > 0 || pool.name.equals("direct") || pool.name.equals("mapped")) {
        t.row(pool.name + " buffers (" + pool.count + ")", Optional.of(pool.usedBytes));
      }
    }
    if (jvm.nmt != null) {
      t.row("NMT committed", Optional.of(jvm.nmt.committedBytes));
      t.row("  of which malloc", Optional.ofNullable(jvm.nmt.mallocBytes));
    } else {
      t.text("NMT", "absent: " + jvm.absent.nmt);
    }
    if (jvm.absent.memoryPools != null) {
      t.text("memory pools", "absent: " + jvm.absent.memoryPools);
    }
    t.section("Allocator (" + b.allocatorKind() + ")");
    t.row("allocated", Optional.of(b.allocatorAllocatedBytes()));
    t.row(
        b.allocatorResidentBytes().isPresent() ? "resident" : "footprint (arenas + mmapped chunks)",
        Optional.of(b.allocatorFootprintBytes()));
    if (b.allocatorDirtyBytes().isPresent()) {
      t.row("  of which dirty (purgeable)", b.allocatorDirtyBytes());
    }
    t.section(
        "Native handles"
            + (b.handles().agentActive() ? "" : " (agent not attached: only track()ed resources)"));
    for (HandleReport.KindCount kind : b.handles().kinds()) {
      if (kind.open() > 0 || kind.leaked() > 0) {
        t.text(kind.kind() + " open / leaked", kind.open() + " / " + kind.leaked());
      }
    }
    t.row("RocksDB caches open (capacity)", Optional.of(b.handles().openCacheCapacityBytes()));
    if (b.handles().zombieCacheCapacityBytes() > 0) {
      t.row(
          "zombie caches (closed in Java, held natively)",
          Optional.of(b.handles().zombieCacheCapacityBytes()));
    }
    t.section("RSS attributed (" + b.view().name().toLowerCase(Locale.ROOT) + " view)");
    for (MemoryBreakdown.Part part : b.attributed()) {
      t.row(part.label, Optional.of(part.bytes()));
    }
    t.row("unaccounted", Optional.of(b.unaccountedBytes()));
    if (b.unaccountedBytes() < 0) {
      t.text(
          "",
          b.view() == MemoryBreakdown.View.COMMITTED
              ? "(negative: committed memory not yet resident; see the resident view)"
              : "(negative: metaspace committed or memory malloc'd but not yet touched)");
    }
    t.section("Headroom");
    t.row("limit - usage", b.headroomBytes());
    return t.toString();
  }

  /** Rows of label, bytes, and percent of the limit. */
  private static final class Table {
    private final StringBuilder out = new StringBuilder();
    private final Long limit;

    Table(Long limit) {
      this.limit = limit;
      out.append(String.format(Locale.ROOT, "%-46s %11s %8s%n", "", "bytes", "% limit"));
    }

    void section(String title) {
      out.append(title).append('\n');
    }

    void row(String label, Optional<Long> bytes) {
      String value = bytes.map(ByteFormat::human).orElse("-");
      String pct =
          bytes.isPresent() && limit != null && limit > 0
              ? String.format(Locale.ROOT, "%.1f%%", 100.0 * bytes.get() / limit)
              : "";
      out.append(String.format(Locale.ROOT, "  %-44s %11s %8s", label, value, pct).stripTrailing());
      out.append('\n');
    }

    void count(String label, Long count) {
      if (count != null) {
        text(label, String.valueOf(count));
      }
    }

    void text(String label, String value) {
      out.append(String.format(Locale.ROOT, "  %-44s %11s%n", label, value));
    }

    @Override
    public String toString() {
      return out.toString().stripTrailing();
    }
  }
}
