package dev.nativemem.handles;

import dev.nativemem.base.text.TerminalText;
import dev.nativemem.internal.ByteFormat;

/** {@link HandleReport} as text for people; control characters of its strings escaped. */
final class HandleReportText {
  private HandleReportText() {}

  static String of(HandleReport r) {
    StringBuilder out = new StringBuilder();
    out.append("Native handles (agent ")
        .append(r.agentActive ? "active, " + r.options : "not attached: only track()ed handles")
        .append(")\n");
    out.append(
        String.format(
            "  %-28s %10s %10s %12s %8s %8s %8s%n",
            "kind", "created", "closed", "transferred", "open", "pooled", "leaked"));
    for (HandleReport.KindCount k : r.kinds) {
      out.append(
          String.format(
              "  %-28s %10d %10d %12d %8d %8d %8d%n",
              k.kind, k.created, k.closed, k.transferred, k.open, k.pooled, k.leaked));
      for (String type : k.classes) {
        out.append("      as ").append(type).append('\n');
      }
    }
    if (!r.sites.isEmpty()) {
      out.append("Open, pooled and leaked handles by creation site:\n");
      for (HandleReport.Site s : r.sites) {
        out.append("  ").append(s.headline()).append('\n');
        if (s.match != null) {
          out.append("    ").append(s.match.entry().id()).append(": ");
          out.append(s.match.advice()).append('\n');
        }
        out.append(indent(s.stack, "    "));
      }
    }
    if (r.openCacheCapacityBytes > 0 || r.zombieCacheCapacityBytes > 0) {
      out.append(
          String.format(
              "Cache capacity: %s in open caches, %s in zombie caches%n",
              ByteFormat.human(r.openCacheCapacityBytes),
              ByteFormat.human(r.zombieCacheCapacityBytes)));
    }
    if (!r.zombieCaches.isEmpty()) {
      out.append("Zombie caches (closed in Java, still held natively by options):\n");
      for (HandleReport.ZombieCache z : r.zombieCaches) {
        String cacheLine = z.cacheCreatedAt;
        out.append(
            String.format(
                "  %s of %s capacity, created at %s, closed in Java%n",
                z.cacheKind,
                ByteFormat.human(z.capacityBytes),
                cacheLine == null ? "(site not recorded)" : cacheLine));
        for (HandleReport.Retainer t : z.retainers) {
          String line = t.createdAt;
          out.append(
              String.format(
                  "    retained by %s (%s), created at %s%n",
                  t.kind, t.state, line == null ? "(site not recorded)" : line));
          out.append(indent(t.site, "        "));
        }
      }
    }
    if (!r.oldestOpen.isEmpty()) {
      out.append("Oldest open handles:\n");
      for (HandleReport.OpenHandle o : r.oldestOpen.subList(0, Math.min(10, r.oldestOpen.size()))) {
        out.append("  ").append(o).append('\n');
      }
    }
    if (r.sitesDropped > 0) {
      out.append(r.sitesDropped).append(" creation stacks not kept: the table of sites is full\n");
    }
    out.append(
        String.format(
            "Tracker memory: %s (%d creation sites kept)%n",
            ByteFormat.human(r.trackerMemoryBytes), r.sitesKept));
    return TerminalText.escape(out);
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
}
