package dev.nativemem.incident;

import dev.nativemem.incident.layout.BundleLayout;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The verdict on a bundle, computed once from its files: how much memory grew and how fast and the
 * headroom left (timeline), where the sampled native heap sits (profile report), the largest sites
 * of leaked and of open handles and every known leak of the catalogue matched (handle report), and
 * what triggered the capture. The page renders it as HTML ({@link #lines} with {@link
 * Markup#HTML}), the JVM's log as plain lines and one JSON line ({@link IncidentLog}): the same
 * facts, never computed twice.
 */
final class Verdict {
  /**
   * Memory growth over the timeline, first to last sample that has it, of the manifest's basis: the
   * cgroup's usage under a limit, else RSS.
   */
  static final class Growth {
    final String label;
    final long from;
    final long to;
    final long millis;
    final Long limit;

    Growth(String label, long from, long to, long millis, Long limit) {
      this.label = label;
      this.from = from;
      this.to = to;
      this.millis = millis;
      this.limit = limit;
    }
  }

  /** What was left below the cgroup limit in the newest sample that has both. */
  static final class Headroom {
    final long limit;
    final long usage;

    Headroom(long limit, long usage) {
      this.limit = limit;
      this.usage = usage;
    }

    long bytes() {
      return limit - usage;
    }

    double share() {
      return bytes() / (double) limit;
    }
  }

  /** Open and leaked handle counts, first to last sample, when either changed. */
  static final class HandleGrowth {
    final long openFrom;
    final long openTo;
    final long leakedFrom;
    final long leakedTo;

    HandleGrowth(long openFrom, long openTo, long leakedFrom, long leakedTo) {
      this.openFrom = openFrom;
      this.openTo = openTo;
      this.leakedFrom = leakedFrom;
      this.leakedTo = leakedTo;
    }
  }

  /** The top flat site of the profile report: the function most of the sampled heap is under. */
  static final class TopFunction {
    final String name;
    final Double share;
    final Long bytes;
    final Long total;

    /** What the allocator counted as malloc'd in the same capture; null when unknown. */
    final Long mallocd;

    /** The allocator serving malloc then ({@code glibc}, {@code jemalloc}); null when unknown. */
    final String allocator;

    TopFunction(String name, Double share, Long bytes, Long total, Long mallocd, String allocator) {
      this.name = name;
      this.share = share;
      this.bytes = bytes;
      this.total = total;
      this.mallocd = mallocd;
      this.allocator = allocator;
    }

    /**
     * Whether the profile saw under half of what was malloc'd: allocated before sampling started,
     * inside libc, or through a pointer from {@code dlsym} (Java's FFM), which no import carries.
     */
    boolean partial() {
      return total != null && mallocd != null && mallocd > 0 && total < mallocd / 2;
    }
  }

  /** A site of the handle report. */
  static final class Site {
    final String kind;
    final long leaked;
    final long open;
    final String createdAt;
    final String knownId;

    /**
     * Handles of the same kind counted without a recorded creation stack (the agent's {@code
     * sampled} level records one stack in {@code interval}); 0 when all were recorded.
     */
    final long unrecorded;

    Site(Map<String, Object> site, long unrecorded) {
      this.kind = Fields.string(site, "kind");
      this.leaked = Fields.count(site, "leaked");
      this.open = Fields.count(site, "open");
      this.createdAt = Fields.string(site, "created_at");
      this.knownId = Fields.string(Fields.object(site, "known"), "id");
      this.unrecorded = unrecorded;
    }
  }

  /** A catalogue entry matched by a site. */
  static final class KnownLeak {
    final String id;
    final String library;
    final List<String> versions;
    final String fixedIn;
    final String cost;
    final String workaround;
    final String link;

    KnownLeak(Map<String, Object> known) {
      this.id = Fields.string(known, "id");
      this.library = Fields.string(known, "library");
      this.versions = Fields.strings(known, "versions");
      this.fixedIn = Fields.string(known, "fixed_in");
      this.cost = Fields.string(known, "cost");
      this.workaround = Fields.string(known, "workaround");
      this.link = Fields.string(known, "link");
    }
  }

  /** How text from a bundle and emphasis are written: the page's HTML or the log's plain text. */
  interface Markup {
    /** Text from the bundle, made safe for the output. */
    String text(String fromBundle);

    /** Emphasis around what we already formatted or escaped. */
    String strong(String formatted);

    /** Code (a function, a frame) around what we already escaped. */
    String code(String escaped);

    Markup HTML =
        new Markup() {
          @Override
          public String text(String fromBundle) {
            return Html.text(fromBundle);
          }

          @Override
          public String strong(String formatted) {
            return "<b>" + formatted + "</b>";
          }

          @Override
          public String code(String escaped) {
            return "<code>" + escaped + "</code>";
          }
        };
  }

  /**
   * The timeline's keys the verdict reads: of a timeline it needs only the first and last sample
   * that has each ({@link Bundle#timelineEdges}).
   */
  static final List<String> TIMELINE_KEYS =
      List.of("t", "usage", "rss", "limit", "handles_open", "handles_leaked");

  final Growth growth;
  final Headroom headroom;
  final HandleGrowth handleGrowth;
  final TopFunction topFunction;
  final Site mostLeaked;
  final Site mostOpen;
  final List<KnownLeak> knownLeaks;
  final int zombieCaches;
  final long zombieCapacity;
  final String triggerKind;
  final String triggerDetail;

  /** Why a part the verdict draws on is absent, by the part's name (timeline, profile, handles). */
  final Map<String, String> absent;

  private Verdict(Bundle bundle) {
    List<Map<String, Object>> timeline = bundle.timelineEdges(TIMELINE_KEYS);
    List<Map<String, Object>> samples = timeline == null ? List.of() : timeline;
    this.growth = growth(samples);
    this.headroom = headroom(samples);
    this.handleGrowth = handleGrowth(samples);
    Map<String, Object> report = bundle.json(BundleLayout.PROFILE_SITES);
    Map<String, Object> allocator =
        Fields.object(Fields.object(bundle.json(BundleLayout.SNAPSHOT), "breakdown"), "allocator");
    this.topFunction = topFunction(report, allocator);
    Map<String, Object> handles = bundle.json(BundleLayout.HANDLES);
    List<Map<String, Object>> sites = Fields.objects(handles, "sites");
    Map<String, Object> leaked = biggest(sites, "leaked");
    Map<String, Object> open = biggest(sites, "open");
    this.mostLeaked = leaked == null ? null : new Site(leaked, unrecorded(sites, leaked, "leaked"));
    this.mostOpen =
        open == null
            ? null
            : open == leaked ? mostLeaked : new Site(open, unrecorded(sites, open, "open"));
    this.knownLeaks = knownLeaks(sites);
    List<Map<String, Object>> zombies = Fields.objects(handles, "zombie_caches");
    long capacity = 0;
    for (Map<String, Object> z : zombies) {
      capacity += Math.max(0, Fields.count(z, "capacity_bytes"));
    }
    this.zombieCaches = zombies.size();
    this.zombieCapacity = capacity;
    Map<String, Object> trigger = Fields.object(bundle.manifest(), "trigger");
    this.triggerKind = Fields.string(trigger, "kind");
    this.triggerDetail = Fields.string(trigger, "detail");
    Map<String, String> why = new LinkedHashMap<>();
    if (timeline == null) {
      why.put("timeline", bundle.whyMissing(BundleLayout.TIMELINE, "timeline"));
    }
    if (report == null) {
      why.put("profile", bundle.whyMissing(BundleLayout.PROFILE_SITES, "heap profile"));
    }
    if (handles == null) {
      why.put("handles", bundle.whyMissing(BundleLayout.HANDLES, "handle report"));
    }
    this.absent = Collections.unmodifiableMap(why);
  }

  static Verdict of(Bundle bundle) {
    return new Verdict(bundle);
  }

  /** The verdict's sentences, the most telling first, in {@code m}; empty when nothing to say. */
  List<String> lines(Markup m) {
    List<String> lines = new ArrayList<>();
    if (growth != null) {
      lines.add(growth(m));
    }
    if (handleGrowth != null) {
      lines.add(handleGrowth(m));
    }
    if (topFunction != null) {
      lines.add(topFunction(m));
    }
    Set<Site> chosen = new LinkedHashSet<>();
    if (mostLeaked != null) {
      chosen.add(mostLeaked);
    }
    if (mostOpen != null) {
      chosen.add(mostOpen);
    }
    for (Site site : chosen) {
      lines.add(site(site, m));
    }
    for (KnownLeak known : knownLeaks) {
      lines.add(knownLeak(known, m));
    }
    if (zombieCaches > 0) {
      lines.add(
          m.strong(
                  Html.count(zombieCaches)
                      + " closed cache"
                      + (zombieCaches == 1 ? "" : "s")
                      + " ("
                      + Html.bytes(zombieCapacity)
                      + " of capacity)")
              + " still alive, kept by open options objects.");
    }
    if (triggerKind != null) {
      lines.add(
          "Captured on the "
              + m.strong(m.text(triggerKind))
              + " trigger"
              + (triggerDetail == null ? "" : ": " + m.text(triggerDetail))
              + ".");
    }
    return lines;
  }

  private String growth(Markup m) {
    long delta = growth.to - growth.from;
    StringBuilder line = new StringBuilder(growth.label);
    line.append(delta >= 0 ? " grew " : " fell ")
        .append(m.strong(Html.bytes(Math.abs(delta))))
        .append(" in ")
        .append(Html.duration(Math.max(growth.millis, 0)))
        .append(", from ")
        .append(Html.bytes(growth.from))
        .append(" to ")
        .append(Html.bytes(growth.to));
    if (growth.limit != null) {
      line.append(", ")
          .append(m.strong(Html.percent(growth.to / (double) growth.limit)))
          .append(" of the ")
          .append(Html.bytes(growth.limit))
          .append(" limit");
    }
    return line.append('.').toString();
  }

  private String handleGrowth(Markup m) {
    return "Tracked native handles over the timeline: open "
        + Html.count(handleGrowth.openFrom)
        + " → "
        + m.strong(Html.count(handleGrowth.openTo))
        + ", leaked "
        + Html.count(handleGrowth.leakedFrom)
        + " → "
        + m.strong(Html.count(handleGrowth.leakedTo))
        + ".";
  }

  private String topFunction(Markup m) {
    return m.strong(topFunction.share == null ? "?" : Html.percent(topFunction.share))
        + " of the sampled native heap ("
        + Html.bytes(topFunction.bytes)
        + " of "
        + Html.bytes(topFunction.total)
        + ") allocated in "
        + m.code(m.text(topFunction.name))
        + "."
        + (topFunction.partial()
            ? " The profile saw "
                + Html.bytes(topFunction.total)
                + " of the "
                + Html.bytes(topFunction.mallocd)
                + (!"glibc".equals(topFunction.allocator)
                    ? " malloc'd: the rest was allocated while sampling was off."
                    : " malloc'd: the rest was allocated before sampling started, inside libc, or"
                        + " through a pointer from dlsym (Java's FFM on JDK 22 and later), which"
                        + " the import-rewriting engine does not see; the preload allocator sees"
                        + " it all (java -jar nativemem.jar env).")
            : "");
  }

  private static String site(Site site, Markup m) {
    String kind = m.text(site.kind);
    StringBuilder line = new StringBuilder();
    if (site.leaked > 0) {
      line.append(m.strong(Html.count(site.leaked) + " " + kind + " leaked"));
      line.append(" (").append(Html.count(site.open)).append(" open)");
    } else {
      line.append(m.strong(Html.count(site.open) + " " + kind + " open"));
    }
    line.append(", created by ")
        .append(m.code(site.createdAt == null ? "an unrecorded site" : m.text(site.createdAt)));
    if (site.unrecorded > 0) {
      line.append(" (and ")
          .append(Html.count(site.unrecorded))
          .append(' ')
          .append(site.leaked > 0 ? "leaked" : "open")
          .append(" without a recorded stack: the agent records 1 stack in its sampling interval)");
    }
    if (site.knownId != null) {
      line.append(" — known leak ").append(m.strong(m.text(site.knownId)));
    }
    return line.append('.').toString();
  }

  /** A catalogue entry: its id, the versions run, where fixed, what it costs, what to do. */
  private static String knownLeak(KnownLeak known, Markup m) {
    StringBuilder line = new StringBuilder("Known leak ").append(m.strong(m.text(known.id)));
    if (known.library != null) {
      line.append(" in ").append(m.text(known.library));
      if (!known.versions.isEmpty()) {
        line.append(" (you run ").append(m.text(String.join(", ", known.versions))).append(')');
      }
    }
    line.append(
        known.fixedIn == null ? "; no fixed release yet" : "; fixed in " + m.text(known.fixedIn));
    if (known.cost != null) {
      line.append(". Cost: ").append(m.text(known.cost));
    }
    if (known.workaround != null) {
      line.append(". Workaround: ").append(m.text(known.workaround));
    }
    if (known.link != null) {
      line.append(" (").append(m.text(known.link)).append(')');
    }
    return line.append('.').toString();
  }

  /** The growth's label with a memory cgroup limit: the cgroup's usage is what the limit counts. */
  static final String CGROUP_BASIS = "Memory usage (cgroup)";

  /**
   * The growth's label without a limit: the cgroup's usage then holds page cache and other
   * processes, and the manifest's basis is this process's RSS.
   */
  static final String RSS_BASIS = "RSS (the basis without a memory cgroup limit)";

  /**
   * Growth of what the bundle's basis compares (the manifest's {@code basis}): the cgroup's usage
   * when a sample has a limit, else this process's RSS; null when that series has fewer than two
   * samples.
   */
  static Growth growth(List<Map<String, Object>> samples) {
    boolean limited = false;
    for (Map<String, Object> s : samples) {
      Long limit = Fields.whole(s, "limit");
      limited |= limit != null && limit > 0;
    }
    String key = limited ? "usage" : "rss";
    Map<String, Object> first = null;
    Map<String, Object> last = null;
    for (Map<String, Object> s : samples) {
      if (Fields.number(s, key) != null && Fields.whole(s, "t") != null) {
        if (first == null) {
          first = s;
        }
        last = s;
      }
    }
    if (first == null || first == last) {
      return null;
    }
    Long limit = Fields.whole(last, "limit");
    return new Growth(
        limited ? CGROUP_BASIS : RSS_BASIS,
        Fields.whole(first, key),
        Fields.whole(last, key),
        Fields.whole(last, "t") - Fields.whole(first, "t"),
        limit != null && limit > 0 ? limit : null);
  }

  /** The newest sample with a cgroup limit and usage; null without a limit. */
  static Headroom headroom(List<Map<String, Object>> samples) {
    for (int i = samples.size() - 1; i >= 0; i--) {
      Long limit = Fields.whole(samples.get(i), "limit");
      Long usage = Fields.whole(samples.get(i), "usage");
      if (limit != null && limit > 0 && usage != null) {
        return new Headroom(limit, usage);
      }
    }
    return null;
  }

  static HandleGrowth handleGrowth(List<Map<String, Object>> samples) {
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
    HandleGrowth g =
        new HandleGrowth(
            Fields.whole(first, "handles_open"),
            Fields.whole(last, "handles_open"),
            Fields.whole(first, "handles_leaked"),
            Fields.whole(last, "handles_leaked"));
    return g.openFrom == g.openTo && g.leakedFrom == g.leakedTo ? null : g;
  }

  static TopFunction topFunction(Map<String, Object> report, Map<String, Object> allocator) {
    List<Map<String, Object>> flat = Fields.objects(report, "top_flat");
    if (flat.isEmpty()) {
      return null;
    }
    Map<String, Object> top = flat.get(0);
    return new TopFunction(
        Fields.string(top, "name"),
        Fields.number(top, "flat_share"),
        Fields.whole(top, "flat_bytes"),
        Fields.whole(report, "total_bytes"),
        Fields.whole(allocator, "allocated_bytes"),
        Fields.string(allocator, "kind"));
  }

  /** The site with the most {@code key} (leaked or open) handles, or null when none has any. */
  static Map<String, Object> biggest(List<Map<String, Object>> sites, String key) {
    Comparator<Map<String, Object>> byCount = Comparator.comparingLong(s -> Fields.count(s, key));
    // A site with its creation line says what to fix; the handles counted without a stack (at the
    // agent's default level, all but 1 in 128) are a remainder, not a site.
    return sites.stream()
        .filter(s -> Fields.count(s, key) > 0)
        .max(
            Comparator.<Map<String, Object>, Boolean>comparing(
                    s -> Fields.string(s, "created_at") != null)
                .thenComparing(byCount))
        .orElse(null);
  }

  /** {@code key} handles of {@code site}'s kind at sites with no creation line, when it has one. */
  static long unrecorded(List<Map<String, Object>> sites, Map<String, Object> site, String key) {
    if (Fields.string(site, "created_at") == null) {
      return 0;
    }
    String kind = Fields.string(site, "kind");
    long count = 0;
    for (Map<String, Object> s : sites) {
      if (Fields.string(s, "created_at") == null
          && kind != null
          && kind.equals(Fields.string(s, "kind"))) {
        count += Fields.count(s, key);
      }
    }
    return count;
  }

  /** One entry per catalogue id matched, in the order of the sites. */
  static List<KnownLeak> knownLeaks(List<Map<String, Object>> sites) {
    List<KnownLeak> leaks = new ArrayList<>();
    Set<String> seen = new LinkedHashSet<>();
    for (Map<String, Object> site : sites) {
      Map<String, Object> known = Fields.object(site, "known");
      String id = Fields.string(known, "id");
      if (id != null && seen.add(id)) {
        leaks.add(new KnownLeak(known));
      }
    }
    return Collections.unmodifiableList(leaks);
  }
}
