package dev.nativemem.handles.advice;

import dev.nativemem.base.Advice;
import dev.nativemem.handles.HandleReport;
import dev.nativemem.handles.catalogue.LeakCatalogue;
import dev.nativemem.handles.tracking.CreationSites;
import dev.nativemem.handles.tracking.TrackingOptions;
import dev.nativemem.internal.ByteFormat;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Turns the handle registry into {@link Advice}: leaked handles, many open handles and zombie
 * caches per creation site, and open handles that grew since the previous call.
 */
public final class HandleAdvice {
  /** Open handles of one kind at one site worth a note even without growth. */
  static final long MANY_OPEN = 100;

  /** Growth of open handles at one site between two calls worth a warning. */
  static final long GROWTH = 10;

  /** Sites shown per kind of advice; the rest are counted in one line. */
  static final int SITES_SHOWN = 10;

  private static final String CLOSE_THEM = "close() them";

  private static final String NO_SITE =
      "(creation site not recorded: " + TrackingOptions.FULL_ADVICE + " to see it)";

  /** Open handles whose creation site is not known: they may be a library's to close. */
  private static final String WHOSE_UNKNOWN =
      "(creation site not recorded, so whose they are is not known: "
          + TrackingOptions.FULL_ADVICE
          + " to see where they are created)";

  /** Open handles per kind and site at the previous call, to tell growth. */
  private static final Map<String, Long> previousOpen = new HashMap<>();

  private static boolean calledBefore;

  private HandleAdvice() {}

  public static List<Advice> evaluate(HandleReport report) {
    List<Advice> advice = new ArrayList<>();
    leaked(report, advice);
    zombieCaches(report, advice);
    manyOpen(report, advice);
    growth(report, advice);
    return advice;
  }

  private static void leaked(HandleReport report, List<Advice> advice) {
    List<String> messages = new ArrayList<>();
    List<String> settings = new ArrayList<>();
    for (HandleReport.Site site : bySize(report.sites(), HandleReport.Site::leaked)) {
      if (site.leaked() > 0 && site.accepted() == null) {
        messages.add(
            site.leaked()
                + " "
                + site.kind()
                + " leaked (garbage-collected while owning native memory), created at "
                + where(site.stack())
                + (site.knownLeakId() == null
                    ? ": close each one (try-with-resources) where it is created or handed over"
                    : ": a known leak, " + site.knownLeak() + "; " + site.knownLeakAdvice()));
        // A known leak's suggestion is its catalogue workaround: what an operator can change.
        settings.add(
            site.knownLeakId() == null
                ? CLOSE_THEM
                : LeakCatalogue.get().entry(site.knownLeakId()).workaround());
      }
    }
    // Leaks counted without a site (level=counts, or not sampled): the kind at least.
    for (HandleReport.KindCount kind : report.kinds()) {
      long atSites = atSites(report, kind.kind(), HandleReport.Site::leaked);
      if (kind.leaked() > atSites) {
        LeakCatalogue.Entry own = librarysOwn(kind.kind());
        messages.add(
            (kind.leaked() - atSites)
                + " "
                + kind.kind()
                + " leaked (garbage-collected unclosed) "
                + (own == null
                    ? NO_SITE
                    : "(creation site not recorded): "
                        + own.library()
                        + " leaks "
                        + own.kind()
                        + " of its own ("
                        + own.summary()
                        + ", "
                        + own.id()
                        + ": "
                        + own.cost()
                        + "), nothing to close in the application; if they outnumber those, run"
                        + " the agent with level=full to see the site"));
        settings.add(own == null ? CLOSE_THEM : "");
      }
    }
    add(advice, messages, settings, "HANDLES_LEAKED", Advice.Severity.WARNING);
  }

  /** The catalogue's accepted entry for a library's own objects of {@code kind}, or null. */
  private static LeakCatalogue.Entry librarysOwn(String kind) {
    for (LeakCatalogue.Entry entry : LeakCatalogue.get().entries()) {
      if (entry.accepted() && entry.kind().equals(kind)) {
        return entry;
      }
    }
    return null;
  }

  private static void zombieCaches(HandleReport report, List<Advice> advice) {
    for (HandleReport.ZombieCache zombie : report.zombieCaches()) {
      StringBuilder retainers = new StringBuilder();
      for (HandleReport.Retainer r : zombie.retainers()) {
        retainers.append(retainers.length() == 0 ? "" : "; ");
        retainers.append(r.kind()).append(" (").append(r.state()).append(") created at ");
        retainers.append(where(r.stack()));
      }
      advice.add(
          new Advice(
              "ZOMBIE_CACHE",
              Advice.Severity.WARNING,
              zombie.cacheKind()
                  + " of "
                  + ByteFormat.human(zombie.capacityBytes())
                  + " capacity, created at "
                  + where(zombie.cacheStack())
                  + ", was closed in Java but is still alive natively, held by "
                  + retainers
                  + ": close those options objects (a ColumnFamilyOptions from"
                  + " getDescriptor().getOptions() is one), closing the cache frees nothing",
              "close the retaining options"));
    }
  }

  /**
   * Many open handles at one site. Closing them is advised only where the application created them;
   * handles without a recorded site may be a library's (a cache, a pool), so their note says how to
   * find out whose they are instead.
   */
  private static void manyOpen(HandleReport report, List<Advice> advice) {
    List<String> messages = new ArrayList<>();
    List<String> unknown = new ArrayList<>();
    for (HandleReport.Site site : bySize(report.sites(), HandleReport.Site::open)) {
      if (site.open() < MANY_OPEN) {
        continue;
      }
      String line = CreationSites.applicationFrame(site.stack());
      if (line == null) {
        unknown.add(site.open() + " " + site.kind() + " open " + WHOSE_UNKNOWN);
      } else {
        messages.add(
            site.open()
                + " "
                + site.kind()
                + " open, created at "
                + line
                + ": each holds native memory until closed; if they are not in use, close them");
      }
    }
    add(advice, messages, "HANDLES_OPEN", Advice.Severity.INFO, "close() what is not in use");
    add(advice, unknown, "HANDLES_OPEN", Advice.Severity.INFO, TrackingOptions.FULL_ADVICE);
  }

  private static void growth(HandleReport report, List<Advice> advice) {
    // Open handles per kind and site now; handles counted without a site, per kind.
    Map<String, Long> now = new HashMap<>();
    Map<String, String> labels = new HashMap<>();
    for (HandleReport.Site site : bySize(report.sites(), HandleReport.Site::open)) {
      String key = site.kind() + '\n' + site.stack();
      now.put(key, site.open());
      labels.put(key, site.kind() + " open at " + where(site.stack()));
    }
    for (HandleReport.KindCount kind : report.kinds()) {
      long withoutSite = kind.open() - atSites(report, kind.kind(), HandleReport.Site::open);
      if (withoutSite > 0) {
        now.put(kind.kind() + '\n', withoutSite);
        labels.put(kind.kind() + '\n', kind.kind() + " open " + WHOSE_UNKNOWN);
      }
    }
    List<String> messages = new ArrayList<>();
    synchronized (previousOpen) {
      boolean first = !calledBefore;
      calledBefore = true;
      for (Map.Entry<String, Long> entry : now.entrySet()) {
        long before = previousOpen.getOrDefault(entry.getKey(), 0L);
        if (!first && entry.getValue() - before >= GROWTH) {
          messages.add(
              labels.get(entry.getKey())
                  + " grew from "
                  + before
                  + " to "
                  + entry.getValue()
                  + " since the previous advice: a leak if it keeps growing"
                  + (entry.getKey().endsWith("\n")
                          || CreationSites.applicationFrame(entry.getKey()) == null
                      ? ""
                      : "; close them"));
        }
      }
      previousOpen.clear();
      previousOpen.putAll(now);
    }
    add(advice, messages, "HANDLES_GROWING", Advice.Severity.WARNING, CLOSE_THEM);
  }

  /** The handles of one kind that sites account for, counted by {@code count}. */
  private static long atSites(
      HandleReport report,
      String kind,
      java.util.function.ToLongFunction<HandleReport.Site> count) {
    return report.sites().stream().filter(s -> s.kind().equals(kind)).mapToLong(count).sum();
  }

  /** One entry per message, at most {@link #SITES_SHOWN}, then one for the rest. */
  private static void add(
      List<Advice> advice,
      List<String> messages,
      String code,
      Advice.Severity severity,
      String setting) {
    add(advice, messages, Collections.nCopies(messages.size(), setting), code, severity);
  }

  /**
   * One entry per message with its own suggestion, at most {@link #SITES_SHOWN}, then one for the
   * rest (with the first of their suggestions).
   */
  private static void add(
      List<Advice> advice,
      List<String> messages,
      List<String> settings,
      String code,
      Advice.Severity severity) {
    for (int i = 0; i < messages.size() && i < SITES_SHOWN; i++) {
      advice.add(new Advice(code, severity, messages.get(i), settings.get(i)));
    }
    if (messages.size() > SITES_SHOWN) {
      advice.add(
          new Advice(
              code,
              severity,
              (messages.size() - SITES_SHOWN)
                  + " more sites like these: NativeHandles.report() lists them all",
              settings.get(SITES_SHOWN)));
    }
  }

  private static List<HandleReport.Site> bySize(
      List<HandleReport.Site> sites, java.util.function.ToLongFunction<HandleReport.Site> count) {
    List<HandleReport.Site> sorted = new ArrayList<>(sites);
    sorted.sort(Comparator.comparingLong(count).reversed());
    return sorted;
  }

  private static String where(String stack) {
    String line = CreationSites.applicationFrame(stack);
    return line == null ? NO_SITE : line;
  }
}
