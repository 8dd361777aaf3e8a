package dev.nativemem.handles;

import dev.nativemem.base.Setting;
import dev.nativemem.base.TrackingLevel;
import dev.nativemem.handles.tracking.HandleTracker;
import dev.nativemem.internal.NativeLibraryLoader;
import java.util.Objects;

/**
 * Native handles of this JVM: RocksDB objects and zlib streams (with the agent, {@code
 * -javaagent:nativemem.jar}) and any resource the application registers with {@link #track}.
 *
 * <ul>
 *   <li><b>open</b>: still owns its native memory, and it is its user's to close;
 *   <li><b>pooled</b>: open, resting in a pool that hands it out again (an {@code Inflater} in a
 *       {@code ZipFile}'s or Spring Boot's nested jar's cache, or a pool reported with {@link
 *       #pooled}); not a leak of whoever used it last;
 *   <li><b>leaked</b>: garbage-collected while still owning it (for {@code Inflater} and {@code
 *       Deflater}: the zlib stream freed by a cleaner, on whatever cleaner thread, instead of by
 *       {@code end()}; for rocksdbjni before 7, closed by the finalizer);
 *   <li><b>transferred</b>: ownership passed on ({@code disOwnNativeHandle}), not a leak;
 *   <li><b>zombie cache</b>: a RocksDB cache closed in Java while an open or leaked options object
 *       still references it natively: options given it by {@code setTableFormatConfig}, copied from
 *       such options, or fetched with {@code getDescriptor().getOptions()} from a column family
 *       that uses it. A family uses the cache of its descriptor's options, and the default family
 *       of a database opened with one {@code Options} (any static {@code open} of {@code RocksDB},
 *       {@code TtlDB}, {@code TransactionDB} or {@code OptimisticTransactionDB}) that of the {@code
 *       Options}.
 * </ul>
 */
public final class NativeHandles {
  static final String AGENT_MISSING =
      "the nativemem agent is not attached, so RocksDB and zlib handles are not tracked; add it"
          + " to the JVM, for Maven Surefire: <argLine>-javaagent:${settings.localRepository}"
          + "/dev/nativemem/nativemem/VERSION/nativemem-VERSION.jar=level=full</argLine>";

  private NativeHandles() {}

  /** Whether the agent is attached and instrumenting. */
  public static boolean agentActive() {
    return HandleTracker.get().agentActive();
  }

  /** What the agent is missing for, with the Surefire {@code argLine} that adds it. */
  public static String agentMissingHint() {
    return AGENT_MISSING.replace("VERSION", NativeLibraryLoader.javaVersion());
  }

  /**
   * How much is recorded per handle: the agent's {@code level=} (else {@link
   * Setting#HANDLES_LEVEL}); without the agent, handles registered with {@link #track} are counted
   * at this level.
   */
  public static TrackingLevel trackingLevel() {
    return HandleTracker.get().options().level();
  }

  /** Counts per kind, open and leaked handles per creation site, zombie caches. */
  public static HandleReport report() {
    return HandleReportReader.read(HandleTracker.get());
  }

  /**
   * Counts per kind and the capacity of the RocksDB caches, without sites, zombie caches or open
   * handles listed (those lists are empty, and the tracker's own figures 0): what the memory
   * breakdown shows, for a fraction of {@link #report()}'s cost.
   */
  public static HandleReport summary() {
    return HandleReportReader.summary(HandleTracker.get());
  }

  /**
   * Opens a scope counting the handles created from now on in this thread and in threads it starts,
   * until {@link HandleScope#close()}.
   */
  public static HandleScope scope(String name) {
    Objects.requireNonNull(name, "name");
    return new HandleScope(HandleTracker.get().openScope(name, false));
  }

  /**
   * Registers a resource the application owns, so it is counted and its leak detected without the
   * agent. Close the returned handle, not the resource.
   */
  public static <T extends AutoCloseable> TrackedResource<T> track(T resource) {
    Objects.requireNonNull(resource, "resource");
    return track(resource, resource.getClass().getSimpleName());
  }

  /** Like {@link #track(AutoCloseable)}, counted under {@code kind}. */
  public static <T extends AutoCloseable> TrackedResource<T> track(T resource, String kind) {
    Objects.requireNonNull(resource, "resource");
    Objects.requireNonNull(kind, "kind");
    TrackedResource<T> tracked = new TrackedResource<>(resource);
    HandleTracker.get().created(tracked, kind, 0, null, false);
    return tracked;
  }

  /**
   * Like {@link #scope(String)}, and records the creation stack of every handle created in it,
   * whatever the agent's level: for tests, where the line matters more than the cost.
   */
  public static HandleScope testScope(String name) {
    Objects.requireNonNull(name, "name");
    return new HandleScope(HandleTracker.get().openScope(name, true));
  }

  /**
   * For a pool of zlib streams the agent does not know: {@code inflater} (an {@code Inflater} or
   * {@code Deflater}) was put into {@code pool}. It is then "pooled by" that pool, not open at the
   * site that used it last, and no longer belongs to that site's scope. Call {@link #borrowed} when
   * the pool hands it out again. Only streams with a record (a creation stack, or created in a
   * scope) are followed.
   */
  public static void pooled(Object inflater, String pool) {
    Objects.requireNonNull(pool, "pool");
    HandleTracker.get().zipPooled(inflater, true, pool);
  }

  /** {@code inflater} was taken from its pool: it belongs to the caller's site and scope now. */
  public static void borrowed(Object inflater) {
    HandleTracker.get().zipPooled(inflater, false, null);
  }
}
