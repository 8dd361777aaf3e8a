package dev.nativemem.handles.tracking;

import dev.nativemem.base.Setting;
import dev.nativemem.base.TrackingLevel;
import dev.nativemem.internal.NativeBridge;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The registry's ids the tracker sends with each event: of kinds, of thread names, and of sites (a
 * creation stack, the note of handles created without one, the note of a pool).
 */
final class TrackerSites {
  /** Site ids of the notes "(pooled by X)", by pool name. */
  private final Map<String, Integer> poolSites = new ConcurrentHashMap<>();

  private final Map<String, Integer> kindIds = new ConcurrentHashMap<>();
  private volatile int noStackSite = -1;

  /** Whether the native core keys sites by JVMTI stack (false once it says the JVM has none). */
  private volatile boolean nativeStackKeys = true;

  /** The options changed: the note of handles without a stack is written anew. */
  void reset() {
    noStackSite = -1;
  }

  int kindId(String kind) {
    Integer id = kindIds.get(kind);
    if (id == null) {
      id = (int) NativeBridge.callForNumber("handle_kind", Map.of("name", kind));
      kindIds.put(kind, id);
    }
    return id;
  }

  static int threadId(HandleTracker.PerThread thread) {
    if (thread.threadId < 0) {
      thread.threadId =
          (int)
              NativeBridge.callForNumber(
                  "handle_thread", Map.of("name", Thread.currentThread().getName()));
    }
    return thread.threadId;
  }

  int siteOf(boolean withStack, TrackingOptions options) {
    return withStack ? stackSite() : unrecordedSite(options);
  }

  /**
   * The site of the current stack. The native core recognises a stack it has seen for a fraction of
   * a Java stack walk; only a new stack is walked here for its text.
   */
  private int stackSite() {
    if (nativeStackKeys) {
      int site = NativeBridge.handlesSiteOfStack();
      if (site >= 0) {
        return site;
      }
      if (site == -1) {
        return (int)
            NativeBridge.callForNumber(
                "handle_site_of_stack", Map.of("stack", CreationSites.capture()));
      }
      nativeStackKeys = false;
    }
    return site(CreationSites.capture()); // interning dedups by text
  }

  /** The site of handles created without a stack: it says why and how to get stacks. */
  int unrecordedSite(TrackingOptions options) {
    int site = noStackSite;
    if (site < 0) {
      site = site(unrecordedNote(options.level(), options.interval()));
      noStackSite = site;
    }
    return site;
  }

  int poolSite(String pool) {
    String name = pool == null || pool.isEmpty() ? "an application pool" : pool;
    return poolSites.computeIfAbsent(name, n -> site("(pooled by " + n + ")"));
  }

  /** The site id of {@code text}, interned by the registry (the same text, the same id). */
  private static int site(String text) {
    return (int) NativeBridge.callForNumber("handle_site", Map.of("stack", text));
  }

  /**
   * What the site of handles without a stack says at {@code level}: at level=full every handle
   * created after the agent started has its stack, so the ones without were created before it (a
   * late attach) or inside nativemem's own work.
   */
  static String unrecordedNote(TrackingLevel level, long interval) {
    switch (level) {
      case SAMPLED:
        return "(creation stack not sampled: level=sampled records 1 in "
            + interval
            + " per thread and up to "
            + KindSampling.PER_SECOND
            + " a second of each kind (in bursts of up to "
            + KindSampling.BURST
            + "); use level=full, at most 16 MiB of stacks, to see every"
            + " site)";
      case FULL:
        return "(creation stack not recorded: created before the agent started, or inside"
            + " nativemem's own work; level=full records every creation after that)";
      default:
        return "(creation stack not recorded: level="
            + level.word()
            + "; use level=sampled or level=full, the agent argument or -D"
            + Setting.HANDLES_LEVEL.property()
            + ", to see sites)";
    }
  }
}
