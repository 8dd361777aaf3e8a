package dev.nativemem.handles;

import dev.nativemem.base.NativeLeakError;
import dev.nativemem.handles.catalogue.LeakCatalogue;
import dev.nativemem.handles.tracking.CreationSites;
import dev.nativemem.handles.tracking.HandleScopeBooks;
import dev.nativemem.handles.tracking.HandleScopeBooks.ScopeEntry;
import dev.nativemem.handles.tracking.HandleTracker;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Counts the native handles created while it is open, on this thread and in threads started from
 * it. {@link #assertNoLeaks} collects garbage first, so unreachable unclosed handles show as
 * leaked.
 *
 * <pre>{@code
 * try (HandleScope scope = NativeHandles.scope("restart")) {
 *   job.restart();
 *   scope.assertNoLeaks(KnownLeak.catalogued("FLINK-39923")); // accepted until Flink fixes it
 * }
 * }</pre>
 */
public final class HandleScope implements AutoCloseable {
  /** How long a check waits for the garbage collector and reference processing. */
  public static final long GC_TIMEOUT_MILLIS = 5_000;

  private final HandleScopeBooks books;

  HandleScope(HandleScopeBooks books) {
    this.books = books;
  }

  public String name() {
    return books.name();
  }

  public long created() {
    return books.created();
  }

  public long closed() {
    return books.closed();
  }

  public long transferred() {
    return books.transferred();
  }

  public long leaked() {
    return books.leaked();
  }

  /** Handles of this scope that still own native memory. */
  public long open() {
    return books.open();
  }

  /**
   * Collects garbage, then fails if any handle of this scope leaked or is still open, except those
   * matching {@code known} and the catalogue's known leaks that nothing in the application can
   * close (RocksDB's own {@code defaultReadOptions_}). A failing site that is a known leak of the
   * catalogue (such as FLINK-39753) names it: the version you run, where it is fixed, what to do.
   *
   * @throws NativeLeakError listing kind, count and creation site of each group
   */
  public void assertNoLeaks(KnownLeak... known) {
    String failure = check(known);
    if (failure != null) {
      throw new NativeLeakError(failure);
    }
  }

  /** Like {@link #assertNoLeaks} but returns the failure text, or null when there is none. */
  public String check(KnownLeak... known) {
    try {
      HandleTracker.get().collectGarbage(GC_TIMEOUT_MILLIS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    List<KnownLeak> allowed = Arrays.asList(known);
    // Read at the first problem: reading it loads the catalogue, whose read makes handles of its
    // own in this scope's thread (a jar's Inflater).
    List<KnownLeak> jvmWide = null;
    Map<String, long[]> failing = new LinkedHashMap<>();
    Map<String, long[]> accepted = new LinkedHashMap<>();
    long leakedCount = 0;
    long openCount = 0;
    for (ScopeEntry entry : books.problems()) {
      String stack = HandleTracker.get().siteText(entry.site);
      LeakCatalogue.Match catalogued = LeakCatalogue.get().match(entry.kind, stack);
      if (jvmWide == null) {
        jvmWide = KnownLeak.acceptedInThisJvm();
      }
      String reason = KnownLeak.acceptedReason(allowed, jvmWide, catalogued, entry.kind, stack);
      String state = entry.leaked ? "leaked" : "open (never closed)";
      if (reason != null) {
        accepted.computeIfAbsent(state + " " + entry.kind + ": " + reason, x -> new long[1])[0]++;
        continue;
      }
      if (entry.leaked) {
        leakedCount++;
      } else {
        openCount++;
      }
      String line = CreationSites.applicationFrame(stack);
      String where = line == null ? "" : " at " + line;
      String label =
          catalogued == null
              ? ""
              : " [known leak: " + catalogued.label() + "]\n" + catalogued.advice();
      String group =
          state
              + " "
              + entry.kind
              + ", created"
              + where
              + label
              + "\n"
              + CreationSites.frames(stack);
      failing.computeIfAbsent(group, x -> new long[1])[0]++;
    }
    if (failing.isEmpty()) {
      return null;
    }
    StringBuilder text = new StringBuilder();
    text.append("native handles leaked in '")
        .append(books.name())
        .append("': ")
        .append(leakedCount)
        .append(" leaked (garbage-collected while owning native memory), ")
        .append(openCount)
        .append(" open (never closed)\n");
    for (Map.Entry<String, long[]> group : failing.entrySet()) {
      text.append("  ").append(group.getValue()[0]).append(" ");
      text.append(group.getKey().trim().replace("\n", "\n      ")).append('\n');
    }
    if (!accepted.isEmpty()) {
      text.append("known leaks, not failed:\n");
      for (Map.Entry<String, long[]> group : accepted.entrySet()) {
        text.append("  ").append(group.getValue()[0]).append(" ").append(group.getKey());
        text.append('\n');
      }
    }
    if (!HandleTracker.get().agentActive()) {
      text.append(NativeHandles.agentMissingHint()).append('\n');
    }
    return text.toString();
  }

  /** Stops counting new handles in this scope (handles already counted stay counted). */
  @Override
  public void close() {
    HandleTracker.get().closeScope(books);
  }

  @Override
  public String toString() {
    return "HandleScope '"
        + name()
        + "': created "
        + created()
        + ", closed "
        + closed()
        + ", transferred "
        + transferred()
        + ", open "
        + open()
        + ", leaked "
        + leaked();
  }
}
