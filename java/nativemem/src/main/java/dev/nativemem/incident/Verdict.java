package dev.nativemem.incident;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The page's first lines, computed from the bundle: how much memory grew and how fast (timeline),
 * where the sampled native heap sits (profile report), the largest site of open or leaked handles
 * and every known leak of the catalogue matched (handle report), and what triggered the capture.
 * Each line is HTML: bundle text escaped, figures with their units.
 */
final class Verdict {
  private Verdict() {}

  static List<String> lines(Bundle bundle) {
    List<String> lines = new ArrayList<>();
    String growth = growth(Fields.objects(bundle.json("timeline.json"), "samples"));
    if (growth != null) {
      lines.add(growth);
    }
    String handleGrowth = handleGrowth(Fields.objects(bundle.json("timeline.json"), "samples"));
    if (handleGrowth != null) {
      lines.add(handleGrowth);
    }
    String top = topSite(bundle.json("profile-report.json"));
    if (top != null) {
      lines.add(top);
    }
    Map<String, Object> handles = bundle.json("handles.json");
    lines.addAll(biggestSites(Fields.objects(handles, "sites")));
    lines.addAll(knownLeaks(Fields.objects(handles, "sites")));
    String zombies = zombieCaches(Fields.objects(handles, "zombie_caches"));
    if (zombies != null) {
      lines.add(zombies);
    }
    Map<String, Object> trigger = Fields.object(bundle.manifest(), "trigger");
    String kind = Fields.string(trigger, "kind");
    if (kind != null) {
      String detail = Fields.string(trigger, "detail");
      lines.add(
          "Captured on the <b>"
              + Html.text(kind)
              + "</b> trigger"
              + (detail == null ? "" : ": " + Html.text(detail))
              + ".");
    }
    if (lines.isEmpty()) {
      lines.add(
          "No verdict: the bundle holds no timeline, heap profile or handle report to compute one"
              + " from (see \"Could not capture\" below).");
    }
    return lines;
  }

  /**
   * Growth over the timeline of the cgroup usage, else RSS: first to last sample that has it, and
   * the share of the limit reached when there is one.
   */
  static String growth(List<Map<String, Object>> samples) {
    for (String[] series : new String[][] {{"usage", "Memory usage (cgroup)"}, {"rss", "RSS"}}) {
      Map<String, Object> first = null;
      Map<String, Object> last = null;
      for (Map<String, Object> s : samples) {
        if (Fields.number(s, series[0]) != null && Fields.whole(s, "t") != null) {
          if (first == null) {
            first = s;
          }
          last = s;
        }
      }
      if (first == null || first == last) {
        continue;
      }
      long from = Fields.whole(first, series[0]);
      long to = Fields.whole(last, series[0]);
      long millis = Fields.whole(last, "t") - Fields.whole(first, "t");
      long delta = to - from;
      StringBuilder line = new StringBuilder(series[1]);
      line.append(delta >= 0 ? " grew <b>" : " fell <b>")
          .append(Html.bytes(Math.abs(delta)))
          .append("</b> in ")
          .append(Html.duration(Math.max(millis, 0)))
          .append(", from ")
          .append(Html.bytes(from))
          .append(" to ")
          .append(Html.bytes(to));
      Long limit = Fields.whole(last, "limit");
      if (limit != null && limit > 0) {
        line.append(", <b>")
            .append(Html.percent(to / (double) limit))
            .append("</b> of the ")
            .append(Html.bytes(limit))
            .append(" limit");
      }
      return line.append('.').toString();
    }
    return null;
  }

  /** Open and leaked handles, first to last sample that counts them, when either changed. */
  static String handleGrowth(List<Map<String, Object>> samples) {
    Map<String, Object> first = null;
    Map<String, Object> last = null;
    for (Map<String, Object> s : samples) {
      if (Fields.whole(s, "handles_open") != null && Fields.whole(s, "handles_leaked") != null) {
        first = first == null ? s : first;
        last = s;
      }
    }
    if (first == null) {
      return null;
    }
    long openFrom = Fields.whole(first, "handles_open");
    long openTo = Fields.whole(last, "handles_open");
    long leakedFrom = Fields.whole(first, "handles_leaked");
    long leakedTo = Fields.whole(last, "handles_leaked");
    if (openFrom == openTo && leakedFrom == leakedTo) {
      return null;
    }
    return "Tracked native handles over the timeline: open "
        + Html.count(openFrom)
        + " → <b>"
        + Html.count(openTo)
        + "</b>, leaked "
        + Html.count(leakedFrom)
        + " → <b>"
        + Html.count(leakedTo)
        + "</b>.";
  }

  /** Where most of the sampled native heap was allocated (the top flat site). */
  static String topSite(Map<String, Object> report) {
    List<Map<String, Object>> flat = Fields.objects(report, "top_flat");
    if (flat.isEmpty()) {
      return null;
    }
    Map<String, Object> top = flat.get(0);
    Double share = Fields.number(top, "flat_share");
    Long bytes = Fields.whole(top, "flat_bytes");
    Long total = Fields.whole(report, "total_bytes");
    return "<b>"
        + (share == null ? "?" : Html.percent(share))
        + "</b> of the sampled native heap ("
        + Html.bytes(bytes)
        + " of "
        + Html.bytes(total)
        + ") allocated in <code>"
        + Html.text(Fields.string(top, "name"))
        + "</code>.";
  }

  /** The site with the most leaked handles and the one with the most open handles. */
  static List<String> biggestSites(List<Map<String, Object>> sites) {
    Set<Map<String, Object>> chosen = new LinkedHashSet<>();
    for (String key : new String[] {"leaked", "open"}) {
      sites.stream()
          .filter(s -> Fields.count(s, key) > 0)
          .max(Comparator.comparingLong(s -> Fields.count(s, key)))
          .ifPresent(chosen::add);
    }
    List<String> lines = new ArrayList<>();
    for (Map<String, Object> site : chosen) {
      lines.add(site(site));
    }
    return lines;
  }

  private static String site(Map<String, Object> site) {
    long leaked = Fields.count(site, "leaked");
    long open = Fields.count(site, "open");
    String kind = Html.text(Fields.string(site, "kind"));
    StringBuilder line = new StringBuilder("<b>");
    if (leaked > 0) {
      line.append(Html.count(leaked)).append(' ').append(kind).append(" leaked</b>");
      line.append(" (").append(Html.count(open)).append(" open)");
    } else {
      line.append(Html.count(open)).append(' ').append(kind).append(" open</b>");
    }
    String createdAt = Fields.string(site, "created_at");
    line.append(", created by <code>")
        .append(createdAt == null ? "an unrecorded site" : Html.text(createdAt))
        .append("</code>");
    Map<String, Object> known = Fields.object(site, "known");
    String id = Fields.string(known, "id");
    if (id != null) {
      line.append(" — known leak <b>").append(Html.text(id)).append("</b>");
    }
    return line.append('.').toString();
  }

  /** One line per catalogue entry matched: its id, the versions run, where fixed, what to do. */
  static List<String> knownLeaks(List<Map<String, Object>> sites) {
    List<String> lines = new ArrayList<>();
    Set<String> seen = new LinkedHashSet<>();
    for (Map<String, Object> site : sites) {
      Map<String, Object> known = Fields.object(site, "known");
      String id = Fields.string(known, "id");
      if (id == null || !seen.add(id)) {
        continue;
      }
      StringBuilder line = new StringBuilder("Known leak <b>").append(Html.text(id)).append("</b>");
      String library = Fields.string(known, "library");
      List<String> versions = Fields.strings(known, "versions");
      if (library != null) {
        line.append(" in ").append(Html.text(library));
        if (!versions.isEmpty()) {
          line.append(" (you run ").append(Html.text(String.join(", ", versions))).append(')');
        }
      }
      String fixed = Fields.string(known, "fixed_in");
      line.append(fixed == null ? "; no fixed release yet" : "; fixed in " + Html.text(fixed));
      String cost = Fields.string(known, "cost");
      if (cost != null) {
        line.append(". Cost: ").append(Html.text(cost));
      }
      String workaround = Fields.string(known, "workaround");
      if (workaround != null) {
        line.append(". Workaround: ").append(Html.text(workaround));
      }
      String link = Fields.string(known, "link");
      if (link != null) {
        line.append(" (").append(Html.text(link)).append(')');
      }
      lines.add(line.append('.').toString());
    }
    return lines;
  }

  /** Closed caches kept alive by options objects: how many and how much capacity. */
  static String zombieCaches(List<Map<String, Object>> zombies) {
    if (zombies.isEmpty()) {
      return null;
    }
    long capacity = 0;
    for (Map<String, Object> z : zombies) {
      capacity += Math.max(0, Fields.count(z, "capacity_bytes"));
    }
    return "<b>"
        + Html.count(zombies.size())
        + " closed cache"
        + (zombies.size() == 1 ? "" : "s")
        + " ("
        + Html.bytes(capacity)
        + " of capacity)</b> still alive, kept by open options objects.";
  }
}
