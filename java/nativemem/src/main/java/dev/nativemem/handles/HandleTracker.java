package dev.nativemem.handles;

import dev.nativemem.Setting;
import dev.nativemem.TrackingLevel;
import dev.nativemem.handles.tracking.End;
import dev.nativemem.handles.tracking.TrackingOptions;
import dev.nativemem.internal.NativeBridge;
import dev.nativemem.internal.NativeLibraryLoader;
import java.lang.ref.Reference;
import java.lang.ref.ReferenceQueue;
import java.lang.ref.WeakReference;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The Java half of the registry: finds the record of a live owner, notices owners the garbage
 * collector took, and attributes handles to scopes. The Rust registry keeps the counts and sites.
 */
public final class HandleTracker {
  private static final HandleTracker INSTANCE = new HandleTracker();

  /** References drained per creation, so leaks show without anyone asking for a report. */
  private static final int DRAIN_PER_CREATION = 8;

  private volatile TrackingOptions options = defaultOptions();
  private volatile boolean agentActive;
  private final ReferenceQueue<Object> queue = new ReferenceQueue<>();

  /** RocksDB immutable references, keyed by their own owning flag (identity). */
  private final Map<Object, TrackedHandle> byFlag = new ConcurrentHashMap<>();

  /** Everything else, keyed by owner identity through {@link TrackedHandle.OwnerProbe}. */
  private final Map<Object, TrackedHandle> byOwner = new ConcurrentHashMap<>();

  /** zlib streams: counted, or recorded by address; never in the maps above. */
  private final ZipStreams zip = new ZipStreams();

  /**
   * Leaked RocksDB handles whose class has a finalizer (rocksdbjni before 7), by owning flag: the
   * finalizer's {@code close()} will still free them, and release what they retain.
   */
  private final Map<AtomicBoolean, TrackedHandle> awaitingFinalizer = new ConcurrentHashMap<>();

  /** Finalizers or cleaners ending a handle right now: a check waits for them. */
  private final AtomicInteger reclaiming = new AtomicInteger();

  /** Site ids of the notes "(pooled by X)", by pool name. */
  private final Map<String, Integer> poolSites = new ConcurrentHashMap<>();

  /** Classes of handles that extend a RocksDB kind, by that kind (bounded). */
  private final Map<String, Set<String>> subclasses = new ConcurrentHashMap<>();

  private static final int MAX_SUBCLASSES = 64;

  private final Map<String, Integer> kindIds = new ConcurrentHashMap<>();
  private final Map<String, Boolean> trackedKinds = new ConcurrentHashMap<>();

  private final InheritableThreadLocal<HandleScopeBooks> currentScope =
      new InheritableThreadLocal<>();
  private final ThreadLocal<PerThread> perThread = ThreadLocal.withInitial(PerThread::new);
  private volatile int noStackSite = -1;

  /** Whether the native core keys sites by JVMTI stack (false once it says the JVM has none). */
  private volatile boolean nativeStackKeys = true;

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
    this.noStackSite = -1;
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
    drain(DRAIN_PER_CREATION);
    PerThread thread = perThread.get();
    TrackedHandle handle =
        newRecord(
            owner,
            queue,
            kind,
            address,
            owningFlag,
            recordsStack(thread, currentScope.get()),
            thread);
    handle.finalizable = finalizable;
    if (owningFlag != null) {
      byFlag.put(owningFlag, handle);
    } else {
      byOwner.put(handle, handle);
    }
  }

  private TrackedHandle newRecord(
      Object owner,
      ReferenceQueue<Object> queue,
      String kind,
      long address,
      AtomicBoolean owningFlag,
      boolean withStack,
      PerThread thread) {
    int site = siteOf(withStack);
    long id = NativeBridge.handlesCreated(kindId(kind), address, site, threadId(thread));
    TrackedHandle handle = new TrackedHandle(owner, queue, id, kind, site, owningFlag);
    joinCurrentScope(handle);
    return handle;
  }

  private int siteOf(boolean withStack) {
    return withStack ? stackSite() : unrecordedSite();
  }

  /** The scope open on this thread, if any, owns {@code handle} from now on. */
  private void joinCurrentScope(TrackedHandle handle) {
    HandleScopeBooks scope = currentScope.get();
    handle.scope = scope;
    if (scope != null) {
      scope.onCreated(handle);
    }
  }

  private static int threadId(PerThread thread) {
    if (thread.threadId < 0) {
      thread.threadId = NativeBridge.handlesInternThread(Thread.currentThread().getName());
    }
    return thread.threadId;
  }

  /**
   * Whether this creation records its stack: always (level {@code full}, or inside a scope that
   * records every site, such as a test class's), never, or every Nth on this thread.
   */
  private boolean recordsStack(PerThread thread, HandleScopeBooks scope) {
    TrackingLevel level = options.level();
    return level == TrackingLevel.FULL
        || (scope != null && scope.everySite)
        || (level == TrackingLevel.SAMPLED && sampleNow(thread));
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
  List<String> subclassesOf(String kind) {
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
    boolean withStack = recordsStack(thread, scope);
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
      finish(handle, leaked ? End.LEAKED : End.CLOSED);
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
          NativeBridge.handlesLeakedIntoPool(handle.id);
        }
        int site = poolSite(pool);
        NativeBridge.handlesReassign(handle.id, site, threadId(thread), true);
        handle.site = site;
        return;
      }
      HandleScopeBooks scope = currentScope.get();
      int site = siteOf(recordsStack(thread, scope));
      NativeBridge.handlesReassign(handle.id, site, threadId(thread), false);
      handle.site = site;
      joinCurrentScope(handle);
    } finally {
      exit();
    }
  }

  private int poolSite(String pool) {
    String name = pool == null || pool.isEmpty() ? "an application pool" : pool;
    return poolSites.computeIfAbsent(
        name, n -> NativeBridge.handlesInternSite("(pooled by " + n + ")"));
  }

  /** Sends the counted zlib streams to the registry. */
  private void sendCounted() {
    for (ZipStreams.Kind kind : zip.kinds()) {
      long[] delta = kind.takeNew();
      if (delta[0] != 0 || delta[1] != 0 || delta[2] != 0) {
        NativeBridge.handlesCounted(
            kindId(kind.name), unrecordedSite(), delta[0], delta[1], delta[2]);
      }
    }
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
        return NativeBridge.handlesInternSiteOfStack(CreationSites.capture());
      }
      nativeStackKeys = false;
    }
    return NativeBridge.handlesInternSite(CreationSites.capture()); // interning dedups by text
  }

  /** The site of handles created without a stack: it says why and how to get stacks. */
  private int unrecordedSite() {
    int site = noStackSite;
    if (site < 0) {
      site = NativeBridge.handlesInternSite(unrecordedNote(options.level(), options.interval()));
      noStackSite = site;
    }
    return site;
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
            + "; use level=full to see every site)";
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

  private int kindId(String kind) {
    Integer id = kindIds.get(kind);
    if (id == null) {
      id = NativeBridge.handlesInternKind(kind);
      kindIds.put(kind, id);
    }
    return id;
  }

  /** The tracked record of a live owner: by its owning flag when it has one, else by identity. */
  TrackedHandle find(Object owner, AtomicBoolean owningFlag) {
    if (owningFlag != null) {
      return byFlag.get(owningFlag);
    }
    return byOwner.get(new TrackedHandle.OwnerProbe(owner));
  }

  /**
   * Ends a live owner's handle. A close run by a finalizer or cleaner counts as a leak: it ran only
   * because the garbage collector found the owner unclosed (rocksdbjni before 7).
   */
  public void ended(Object owner, AtomicBoolean owningFlag, End how) {
    boolean reclaimed = how == End.CLOSED && Reclaimers.onReclaimerThread();
    if (!reclaimed) {
      end(owner, owningFlag, how, false);
      return;
    }
    reclaiming.incrementAndGet();
    try {
      end(owner, owningFlag, how, true);
    } finally {
      reclaiming.decrementAndGet();
    }
  }

  private void end(Object owner, AtomicBoolean owningFlag, End how, boolean reclaimed) {
    TrackedHandle handle =
        owningFlag != null
            ? byFlag.remove(owningFlag)
            : byOwner.remove(new TrackedHandle.OwnerProbe(owner));
    if (handle == null) {
      // Collected before, so whoever closes it now is a finalizer, on whichever thread.
      TrackedHandle leaked = owningFlag == null ? null : awaitingFinalizer.remove(owningFlag);
      if (leaked != null && how == End.CLOSED) {
        NativeBridge.handlesFinalized(leaked.id, kindId(leaked.kind), leaked.site);
      }
      return;
    }
    // A cleared reference means the collector found the owner unreachable before this close: a
    // finalizer runs it, also on the threads System.runFinalization starts.
    if (reclaimed || (how == End.CLOSED && handle.get() == null)) {
      how = owningFlag != null ? End.FINALIZED : End.LEAKED;
    }
    finish(handle, how);
  }

  private void finish(TrackedHandle handle, End how) {
    if (!handle.ended.compareAndSet(false, true)) {
      return;
    }
    NativeBridge.handlesEnded(handle.id, how.code);
    if (handle.scope != null) {
      handle.scope.onEnded(handle, how == End.FINALIZED ? End.LEAKED : how);
    }
  }

  /** Registry id of a live owner, or -1 if it is not tracked. */
  public long idOf(Object owner, AtomicBoolean owningFlag) {
    TrackedHandle handle = find(owner, owningFlag);
    return handle == null ? -1 : handle.id;
  }

  /** Processes up to {@code max} collected owners. */
  private void drain(int max) {
    for (int i = 0; i < max; i++) {
      Reference<?> ref = queue.poll();
      if (ref == null) {
        return;
      }
      collected(ref);
    }
  }

  private void collected(Reference<?> ref) {
    if (!(ref instanceof TrackedHandle)) {
      return; // a sentinel of forceCollection
    }
    TrackedHandle handle = (TrackedHandle) ref;
    // Read the flag before taking the record: a finalizer (rocksdbjni < 7) may be closing the
    // owner right now; its close hook runs before the flag drops, so whoever takes the record
    // first sees the flag still set and calls it a leak.
    boolean owning = handle.stillOwning();
    boolean removed =
        handle.owningFlag != null
            ? byFlag.remove(handle.owningFlag, handle)
            : byOwner.remove(handle, handle);
    if (removed) {
      if (owning && handle.finalizable) {
        awaitingFinalizer.put(handle.owningFlag, handle);
      }
      finish(handle, owning ? End.LEAKED : End.CLOSED);
    }
  }

  /** RocksDB classes that override {@code close()} clear the owning flag without our hook. */
  private void reconcileClosedByOverride() {
    for (TrackedHandle handle : byFlag.values()) {
      if (!handle.owningFlag.get() && byFlag.remove(handle.owningFlag, handle)) {
        finish(handle, End.CLOSED);
      }
    }
  }

  /**
   * Runs the garbage collector and processes what it found, waiting at most {@code timeoutMillis}.
   * Returns whether the collector finished within the time.
   */
  boolean collectGarbage(long timeoutMillis) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMillis);
    boolean sentinelSeen = false;
    for (int round = 0; round < 2; round++) {
      WeakReference<Object> sentinel = new WeakReference<>(new Object(), queue);
      sentinelSeen = false;
      System.gc();
      while (!sentinelSeen) {
        long left = TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime());
        if (left <= 0) {
          break;
        }
        Reference<?> ref = queue.remove(Math.min(left, 50));
        if (ref == null) {
          System.gc();
        } else if (ref == sentinel) {
          sentinelSeen = true;
        } else {
          collected(ref);
        }
      }
      Reference.reachabilityFence(sentinel);
      drain(Integer.MAX_VALUE);
    }
    reconcileClosedByOverride();
    while (reclaiming.get() > 0 && System.nanoTime() < deadline) {
      TimeUnit.MILLISECONDS.sleep(1);
    }
    return zip.awaitCleaner(deadline) && sentinelSeen;
  }

  /** Memory of the Java side's records, about: a weak reference and map entries per record. */
  long javaMemoryBytes() {
    long records = byFlag.size() + byOwner.size() + awaitingFinalizer.size() + zip.recordCount();
    return records * 120 + zip.countedByAddress() * 50L;
  }

  /**
   * Brings the registry's totals up to date for the memory watch: notices owners the collector took
   * (a bounded number per call) and sends the counted zlib streams.
   */
  public void settleForSample() {
    drain(256);
    sendCounted();
  }

  /** Processes collected owners and returns the registry's report as JSON. */
  String reportJson() {
    drain(Integer.MAX_VALUE);
    reconcileClosedByOverride();
    sendCounted();
    return NativeBridge.handlesReportJson();
  }

  String siteText(int site) {
    return NativeBridge.handlesSiteText(site);
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
  HandleScopeBooks openScope(String name, boolean everySite) {
    NativeLibraryLoader.load();
    HandleScopeBooks books = new HandleScopeBooks(name, currentScope.get(), everySite);
    currentScope.set(books);
    return books;
  }

  /** Closes {@code books} on this thread, restoring the scope that was current before it. */
  void closeScope(HandleScopeBooks books) {
    if (currentScope.get() == books) {
      currentScope.set(books.parent);
    }
  }
}
