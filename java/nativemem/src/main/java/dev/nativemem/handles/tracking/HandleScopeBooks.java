package dev.nativemem.handles.tracking;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/** Counts of the handles created while a scope was current, in any thread it started. */
public final class HandleScopeBooks {
  /** Leaked handles kept per scope for reporting; the count goes on past it. */
  static final int MAX_LEAKS_KEPT = 10_000;

  final String name;
  final HandleScopeBooks parent;

  /** Record the creation stack of every handle created in this scope (and scopes within it). */
  final boolean everySite;

  final AtomicLong created = new AtomicLong();
  final AtomicLong closed = new AtomicLong();
  final AtomicLong transferred = new AtomicLong();
  final AtomicLong leaked = new AtomicLong();
  private final Set<TrackedHandle> open = ConcurrentHashMap.newKeySet();

  /** Leaked handles as they were when they leaked (a pooled stream's site changes later). */
  private final ConcurrentLinkedQueue<ScopeEntry> leaks = new ConcurrentLinkedQueue<>();

  private final AtomicInteger leaksKept = new AtomicInteger();

  HandleScopeBooks(String name, HandleScopeBooks parent, boolean everySite) {
    this.name = name;
    this.parent = parent;
    this.everySite = everySite || (parent != null && parent.everySite);
  }

  void onCreated(TrackedHandle handle) {
    for (HandleScopeBooks s = this; s != null; s = s.parent) {
      s.created.incrementAndGet();
      s.open.add(handle);
    }
  }

  void onEnded(TrackedHandle handle, End how) {
    for (HandleScopeBooks s = this; s != null; s = s.parent) {
      s.open.remove(handle);
      switch (how) {
        case CLOSED:
          s.closed.incrementAndGet();
          break;
        case TRANSFERRED:
          s.transferred.incrementAndGet();
          break;
        case LEAKED:
          s.leaked.incrementAndGet();
          if (s.leaksKept.incrementAndGet() <= MAX_LEAKS_KEPT) {
            s.leaks.add(new ScopeEntry(handle.kind, handle.site, true));
          }
          break;
      }
    }
  }

  public String name() {
    return name;
  }

  public long created() {
    return created.get();
  }

  public long closed() {
    return closed.get();
  }

  public long transferred() {
    return transferred.get();
  }

  public long leaked() {
    return leaked.get();
  }

  public long open() {
    return open.size();
  }

  /** Handles still open and handles leaked, each with its kind and creation site. */
  public List<ScopeEntry> problems() {
    List<ScopeEntry> entries = new ArrayList<>();
    for (TrackedHandle handle : open) {
      entries.add(new ScopeEntry(handle.kind, handle.site, false));
    }
    entries.addAll(leaks);
    return entries;
  }

  /** One open or leaked handle of a scope. */
  public static final class ScopeEntry {
    public final String kind;
    public final int site;
    public final boolean leaked;

    ScopeEntry(String kind, int site, boolean leaked) {
      this.kind = kind;
      this.site = site;
      this.leaked = leaked;
    }
  }
}
