package dev.nativemem.handles.tracking;

import dev.nativemem.base.TrackingLevel;
import dev.nativemem.internal.Json;
import dev.nativemem.internal.NativeBridge;
import dev.nativemem.internal.NativeLibraryLoader;
import java.lang.ref.ReferenceQueue;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Predicate;

/**
 * The Java half of the registry, fed by the agent's hooks and {@code NativeHandles}: its options,
 * the creation of each handle (sampled stack, scope) and the events of zlib streams and pools;
 * {@link OwnerRecords} ends the records, {@link TrackerSites} holds the registry's ids. The Rust
 * registry keeps the counts and sites.
 */
public final class HandleTracker {
  private static final HandleTracker INSTANCE = new HandleTracker();

  /** References drained per creation, so leaks show without anyone asking for a report. */
  private static final int DRAIN_PER_CREATION = 8;

  private volatile TrackingOptions options = defaultOptions();
  private volatile boolean agentActive;

  /** zlib streams: counted, or recorded by address; never in the maps above. */
  private final ZipStreams zip = new ZipStreams();

  /** Spring Boot's nested-jar Inflater pools, read at each report. */
  private final NestedJarPools nestedJarPools = new NestedJarPools();

  /** The pool note of {@link #nestedJarPools}. */
  public static final String NESTED_JAR_POOL =
      "org.springframework.boot.loader.jar.NestedJarFileResources";

  /** Whether a stream has no record of its own: it is only counted. */
  private final Predicate<Object> unrecorded = stream -> zip.recordOf(stream) == null;

  /** Counted Inflaters resting in {@link #nestedJarPools} as last sent; -1 before the first. */
  private long nestedJarPooledSent = -1;

  private final TrackerSites sites = new TrackerSites();
  private final OwnerRecords records = new OwnerRecords(sites, zip);

  /** Classes of handles that extend a RocksDB kind, by that kind (bounded). */
  private final Map<String, Set<String>> subclasses = new ConcurrentHashMap<>();

  private static final int MAX_SUBCLASSES = 64;

  private final Map<String, Boolean> trackedKinds = new ConcurrentHashMap<>();

  /** level=sampled's rate per kind, beside the per-thread interval. */
  private final KindSampling kindRates = new KindSampling();

  private final InheritableThreadLocal<HandleScopeBooks> currentScope =
      new InheritableThreadLocal<>();
  private final ThreadLocal<PerThread> perThread = ThreadLocal.withInitial(PerThread::new);

  private HandleTracker() {}

  public static HandleTracker get() {
    return INSTANCE;
  }

  private static TrackingOptions defaultOptions() {
    try {
      return TrackingOptions.defaults();
    } catch (IllegalArgumentException e) {
      System.err.println("nativemem: ignoring bad nativemem.handles.* property: " + e.getMessage());
      return TrackingOptions.parse("level=sampled", new java.util.Properties());
    }
  }

  /**
   * Called once by the agent, before any class is instrumented. {@code lateAttach}: handles created
   * before this call may still end.
   */
  public void activate(TrackingOptions options, boolean lateAttach) {
    NativeLibraryLoader.load();
    this.options = options;
    sites.reset();
    nestedJarPooledSent = -1;
    trackedKinds.clear();
    zip.configure(options, lateAttach);
    Reclaimers.onReclaimerThread(); // initialised here, not inside a JDK class's hook
    this.agentActive = true;
  }

  public boolean agentActive() {
    return agentActive;
  }

  public TrackingOptions options() {
    return options;
  }

  /** Per-thread state: interned thread name, sampling counter and the reentrancy guard. */
  static final class PerThread {
    int threadId = -1;

    /** Creations left before the next sampled one; the first creation is sampled. */
    int untilSample;

    boolean busy;
  }

  /**
   * Enters a hook on this thread; false when already inside one (our own code creating an {@code
   * Inflater}, for example), in which case the hook must do nothing.
   */
  public boolean enter() {
    PerThread state = perThread.get();
    if (state.busy) {
      return false;
    }
    state.busy = true;
    return true;
  }

  public void exit() {
    perThread.get().busy = false;
  }

  /** Whether a handle of this kind is tracked under the current options. */
  public boolean tracks(String kind, String group) {
    return trackedKinds.computeIfAbsent(kind, k -> options.tracks(k, group));
  }

  /**
   * Registers a new owning handle. {@code owningFlag} null: ownership ends by our own mark. {@code
   * finalizable}: a finalizer may still free it once it is collected.
   */
  public void created(
      Object owner, String kind, long address, AtomicBoolean owningFlag, boolean finalizable) {
    records.drain(DRAIN_PER_CREATION);
    PerThread thread = perThread.get();
    TrackedHandle handle =
        newRecord(
            owner,
            records.queue,
            kind,
            address,
            owningFlag,
            recordsStack(thread, currentScope.get(), kind),
            thread);
    handle.finalizable = finalizable;
    records.add(handle);
  }

  private TrackedHandle newRecord(
      Object owner,
      ReferenceQueue<Object> queue,
      String kind,
      long address,
      AtomicBoolean owningFlag,
      boolean withStack,
      PerThread thread) {
    int site = sites.siteOf(withStack, options);
    long id =
        NativeBridge.handlesCreated(
            sites.kindId(kind), address, site, TrackerSites.threadId(thread));
    TrackedHandle handle = new TrackedHandle(owner, queue, id, kind, site, owningFlag);
    joinCurrentScope(handle);
    return handle;
  }

  /** The scope open on this thread, if any, owns {@code handle} from now on. */
  private void joinCurrentScope(TrackedHandle handle) {
    HandleScopeBooks scope = currentScope.get();
    handle.scope = scope;
    if (scope != null) {
      scope.onCreated(handle);
    }
  }

  /**
   * Whether this creation records its stack: always (level {@code full}, or inside a scope that
   * records every site, such as a test class's), never, or (level {@code sampled}) every Nth on
   * this thread and, whatever N, up to {@link KindSampling#PER_SECOND} of its kind a second.
   */
  private boolean recordsStack(PerThread thread, HandleScopeBooks scope, String kind) {
    TrackingLevel level = options.level();
    return level == TrackingLevel.FULL
        || (scope != null && scope.everySite)
        || (level == TrackingLevel.SAMPLED && (sampleNow(thread) || kindRates.withinRate(kind)));
  }

  /** Remembers that {@code concrete} is tracked as the RocksDB kind {@code kind}. */
  public void subclassSeen(String kind, String concrete) {
    if (subclasses.size() < MAX_SUBCLASSES) {
      subclasses
          .computeIfAbsent(kind, k -> Collections.synchronizedSet(new TreeSet<>()))
          .add(concrete);
    }
  }

  /** The classes seen extending {@code kind}, sorted. */
  public List<String> subclassesOf(String kind) {
    Set<String> classes = subclasses.get(kind);
    if (classes == null) {
      return Collections.emptyList();
    }
    synchronized (classes) {
      return new ArrayList<>(classes);
    }
  }

  /** Every {@code interval}th creation on this thread, counted down (no division per handle). */
  private boolean sampleNow(PerThread thread) {
    if (--thread.untilSample >= 0) {
      return false;
    }
    thread.untilSample = options.interval() - 1;
    return true;
  }

  /**
   * In the constructor of an {@code Inflater} or {@code Deflater}, once its zlib stream exists.
   * Without a scope and a stack to record, the stream is only counted: no record, no JNI call.
   */
  public void zipCreated(Object owner, long address, int kindCode) {
    ZipStreams.Kind kind = zip.kind(kindCode);
    if (kind == null || address == 0) {
      return;
    }
    HandleScopeBooks scope = currentScope.get();
    if (scope == null && options.level() == TrackingLevel.COUNTS) {
      zip.count(kind, address);
      return;
    }
    PerThread thread = perThread.get();
    boolean withStack = recordsStack(thread, scope, kind.name);
    if ((!withStack && scope == null) || thread.busy) {
      zip.count(kind, address); // inside our own hook: counted, so its end is not a stranger
      return;
    }
    thread.busy = true;
    try {
      zip.record(address, newRecord(owner, null, kind.name, address, null, withStack, thread));
    } catch (RuntimeException | LinkageError e) {
      zip.count(kind, address);
      throw e;
    } finally {
      thread.busy = false;
    }
  }

  /** At the start of the JDK's {@code ZStreamRef.run()}, which frees the zlib stream. */
  public void zipFreed(long address, int kindCode) {
    ZipStreams.Kind kind = zip.kind(kindCode);
    if (kind == null || address == 0) {
      return; // not tracked, or already freed
    }
    boolean leaked = Reclaimers.onReclaimerThread();
    TrackedHandle handle = zip.freed(kind, address, leaked);
    if (handle != null) {
      OwnerRecords.finish(handle, leaked ? End.LEAKED : End.CLOSED);
      zip.forget(address, handle); // only now: a scope check waits for this
    }
  }

  /**
   * A pool ({@code pool}: a {@code ZipFile}'s or Spring Boot's nested jar's Inflater cache, or one
   * the application reports) took {@code inflater} back ({@code pooled}) or handed it out again.
   * Resting in the pool, the stream is the pool's: the report lists it as "pooled by" the pool, its
   * scope sees it transferred (leaked, when a cleaner returned it because the reader dropped its
   * stream unclosed). Handed out again, it is the new reader's: its site and scope become the
   * reader's.
   */
  public void zipPooled(Object inflater, boolean pooled, String pool) {
    TrackedHandle handle = inflater == null ? null : zip.recordOf(inflater);
    if (handle == null || handle.ended.get() || handle.pooled == pooled || !enter()) {
      return;
    }
    try {
      handle.pooled = pooled;
      PerThread thread = perThread.get();
      if (pooled) {
        // Returned by a cleaner: its reader dropped the stream unclosed.
        boolean leaked = Reclaimers.onReclaimerThread();
        HandleScopeBooks scope = handle.scope;
        handle.scope = null;
        if (scope != null) {
          scope.onEnded(handle, leaked ? End.LEAKED : End.TRANSFERRED);
        }
        if (leaked) {
          NativeBridge.call("handle_leaked_into_pool", Map.of("handle", handle.id));
        }
        int site = sites.poolSite(pool);
        NativeBridge.handlesReassign(handle.id, site, TrackerSites.threadId(thread), true);
        handle.site = site;
        return;
      }
      HandleScopeBooks scope = currentScope.get();
      int site = sites.siteOf(recordsStack(thread, scope, handle.kind), options);
      NativeBridge.handlesReassign(handle.id, site, TrackerSites.threadId(thread), false);
      handle.site = site;
      joinCurrentScope(handle);
    } finally {
      exit();
    }
  }

  /**
   * A Spring Boot nested-jar pool's hook ran with {@code pool}: the pool is read at each report.
   */
  public void nestedJarPoolSeen(Object pool) {
    nestedJarPools.seen(pool);
  }

  /**
   * Sends the counted zlib streams to the registry, then how many of the counted Inflaters rest in
   * Spring Boot's nested-jar pools now (read from the pools: their events only follow recorded
   * streams).
   */
  private synchronized void sendCounted() {
    for (ZipStreams.Kind kind : zip.kinds()) {
      long[] delta = kind.takeNew();
      if (delta[0] != 0 || delta[1] != 0 || delta[2] != 0) {
        NativeBridge.call(
            "handles_counted",
            Map.of(
                "kind",
                sites.kindId(kind.name),
                "site",
                sites.unrecordedSite(options),
                "created",
                delta[0],
                "closed",
                delta[1],
                "leaked",
                delta[2]));
      }
    }
    ZipStreams.Kind inflater = zip.kinds()[ZipStreams.INFLATER];
    if (inflater.tracked) {
      long pooled = nestedJarPools.resting(unrecorded);
      if (pooled != nestedJarPooledSent) {
        NativeBridge.call(
            "handles_counted_pooled",
            Map.of(
                "kind",
                sites.kindId(inflater.name),
                "site",
                sites.unrecordedSite(options),
                "pool_site",
                sites.poolSite(NESTED_JAR_POOL),
                "pooled",
                pooled));
        nestedJarPooledSent = pooled;
      }
    }
  }

  /** The tracked record of a live owner: by its owning flag when it has one, else by identity. */
  TrackedHandle find(Object owner, AtomicBoolean owningFlag) {
    return records.find(owner, owningFlag);
  }

  /**
   * Ends a live owner's handle. A close run by a finalizer or cleaner counts as a leak: it ran only
   * because the garbage collector found the owner unclosed (rocksdbjni before 7).
   */
  public void ended(Object owner, AtomicBoolean owningFlag, End how) {
    records.ended(owner, owningFlag, how);
  }

  /** Registry id of a live owner, or -1 if it is not tracked. */
  public long idOf(Object owner, AtomicBoolean owningFlag) {
    TrackedHandle handle = find(owner, owningFlag);
    return handle == null ? -1 : handle.id;
  }

  /**
   * Runs the garbage collector and processes what it found, waiting at most {@code timeoutMillis}.
   * Returns whether the collector finished within the time.
   */
  public boolean collectGarbage(long timeoutMillis) throws InterruptedException {
    return records.collectGarbage(timeoutMillis);
  }

  /** Memory of the Java side's records, about. */
  public long javaMemoryBytes() {
    return records.javaMemoryBytes();
  }

  /**
   * Brings the registry's totals up to date for the memory watch: notices owners the collector took
   * (a bounded number per call) and sends the counted zlib streams.
   */
  public void settleForSample() {
    records.drain(256);
    sendCounted();
  }

  /** Processes collected owners and returns the registry's report as JSON. */
  public String reportJson() {
    settle();
    return NativeBridge.call("handles_report");
  }

  /**
   * Processes collected owners and returns the registry's counts per kind and cache capacities as
   * JSON: what the memory breakdown shows, without sites, stacks or listed handles.
   */
  public String summaryJson() {
    settle();
    return NativeBridge.call("handles_summary");
  }

  /** Brings the registry's figures up to date: every collected owner, every counted stream. */
  private void settle() {
    records.drain(Integer.MAX_VALUE);
    records.reconcileClosedByOverride();
    sendCounted();
  }

  public String siteText(int site) {
    return (String) Json.parse(NativeBridge.call("handle_site_text", Map.of("site", site)));
  }

  public void setCapacity(Object owner, AtomicBoolean flag, long bytes) {
    TrackedHandle handle = find(owner, flag);
    if (handle != null && bytes >= 0) {
      NativeBridge.handlesSetCapacity(handle.id, bytes);
    }
  }

  public void retain(long holder, long cache) {
    if (holder >= 0 && cache >= 0) {
      NativeBridge.handlesRetain(holder, cache);
    }
  }

  public void inherit(long target, long source) {
    if (target >= 0 && source >= 0) {
      NativeBridge.handlesInherit(target, source);
    }
  }

  /**
   * Opens a scope on this thread; threads started while it is open inherit it. {@code everySite}:
   * record the creation stack of every handle created in it, whatever the level.
   */
  public HandleScopeBooks openScope(String name, boolean everySite) {
    NativeLibraryLoader.load();
    HandleScopeBooks books = new HandleScopeBooks(name, currentScope.get(), everySite);
    currentScope.set(books);
    return books;
  }

  /** Closes {@code books} on this thread, restoring the scope that was current before it. */
  public void closeScope(HandleScopeBooks books) {
    if (currentScope.get() == books) {
      currentScope.set(books.parent);
    }
  }
}
