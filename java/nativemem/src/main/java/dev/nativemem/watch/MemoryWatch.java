package dev.nativemem.watch;

import dev.nativemem.base.NativeMemoryException;
import dev.nativemem.internal.AppLog;
import dev.nativemem.internal.DirectoryHandle;
import dev.nativemem.internal.Jmx;
import dev.nativemem.internal.NativeLibraryLoader;
import dev.nativemem.internal.RuntimeModules;
import dev.nativemem.profile.HeapProfiler;
import java.io.BufferedReader;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.HashSet;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import javax.management.ObjectName;

/**
 * Samples this process's memory every second (cgroup usage and limit, RSS, allocator, heap,
 * handles) into a ring of the last hour and captures an incident bundle when usage crosses a share
 * of the limit, grows towards it, or handles leak in numbers; or when asked ({@link #capture}, JMX,
 * {@code nativemem attach <pid> incident}). One watch runs per JVM: starting one stops the
 * previous.
 *
 * <p>Sampling runs on its own daemon thread at the highest priority and allocates nothing, so it
 * keeps time under garbage collection pressure; captures run on pre-started threads, so sampling
 * goes on while a bundle is written: one for an incident's first, full bundle, one for its
 * escalations (the cheap parts, near the limit), which never wait behind the full one.
 */
public final class MemoryWatch implements AutoCloseable {
  private static final AppLog LOG = AppLog.get("dev.nativemem.watch");

  /** Logged when starting the watch turns heap sampling on (either engine). */
  static final String SAMPLING_TURNED_ON =
      "nativemem memory watch: turned heap sampling on (HeapProfiler.start()), so"
          + " bundles carry a heap profile; -Dnativemem.watch.profile=false or"
          + " WatchOptions.withProfile(false) leaves sampling as it is";

  private static final Object STARTING = new Object();
  private static volatile MemoryWatch current;

  private final WatchOptions options;
  private final WatchDirectory directory;
  private final SampleRing ring;
  private final Sampler sampler = new Sampler();
  private final Triggers triggers;
  private final IncidentBundle bundle;

  /** The trigger of a new incident, for the capture thread (a full bundle). */
  private final AtomicReference<Trigger> pending = new AtomicReference<>();

  /**
   * The trigger escalating the current incident, for the escalation thread: it never waits behind
   * the incident's full bundle, which may take seconds in a process reclaiming at its limit.
   */
  private final AtomicReference<Trigger> pendingEscalation = new AtomicReference<>();

  private final Object captureLock = new Object();
  private final Set<String> logged = new HashSet<>();
  private final Thread sampling;
  private final Thread capturing;
  private final Thread escalating;

  /** Capture threads still running: the last one out closes the directory. */
  private final AtomicInteger captureThreads = new AtomicInteger(2);

  private volatile boolean running = true;
  private volatile Path lastBundle;
  private long lastAutomaticNanos;

  /** When the last automatic trigger was handed to the capture thread (sampling thread only). */
  private long lastOfferNanos;

  private boolean capturedAutomatically;

  /** The highest limit threshold captured in the current incident (sampling thread only). */
  private double incidentThreshold;

  /** The incident's newest escalation bundle, replaced by the next one (under captureLock). */
  private String escalationBundle;

  private ObjectName mbean;

  private MemoryWatch(WatchOptions options, WatchDirectory directory) {
    this.options = options;
    this.directory = directory;
    this.ring = new SampleRing(options.capacity());
    long physical = physicalMemory();
    this.triggers = new Triggers(options, physical);
    this.bundle = new IncidentBundle(options, ring.capacity(), physical);
    this.sampling = new Thread(this::sampleLoop, "nativemem-watch");
    this.capturing = new Thread(() -> captureLoop(pending, false), "nativemem-watch-capture");
    this.escalating =
        new Thread(() -> captureLoop(pendingEscalation, true), "nativemem-watch-escalation");
    for (Thread t : new Thread[] {sampling, capturing, escalating}) {
      t.setDaemon(true);
      t.setPriority(Thread.MAX_PRIORITY);
    }
  }

  /**
   * Starts the memory watch: a sample every second, an incident bundle in {@link
   * WatchOptions#directory()} when usage nears the limit, grows towards it or handles leak, and on
   * demand ({@link #capture}). One watch per JVM: this stops the previous one. {@code
   * -Dnativemem.watch=on} starts it with {@link WatchOptions#fromSystemProperties()}.
   *
   * @throws NativeMemoryException if the watch directory cannot be made or is not safe to write in,
   *     saying what to do
   */
  public static MemoryWatch start(WatchOptions options) {
    Objects.requireNonNull(options, "options");
    NativeLibraryLoader.load();
    WatchDirectory dir;
    try {
      dir = WatchDirectory.open(options.directory());
    } catch (RuntimeException e) {
      String message = String.valueOf(e.getMessage());
      throw new NativeMemoryException(
          "memory watch: cannot use " + options.directory() + ": " + message, e);
    }
    synchronized (STARTING) {
      MemoryWatch previous = current;
      if (previous != null) {
        previous.close();
      }
      MemoryWatch watch;
      try {
        watch = new MemoryWatch(options, dir);
        HeapProfiler profiler = HeapProfiler.get();
        if (options.profile() && profiler.isAvailable() && !profiler.isActive()) {
          profiler.start(); // a bundle's profile holds what was sampled since
          LOG.log(System.Logger.Level.INFO, SAMPLING_TURNED_ON);
        }
        watch.sampler.sampleInto(watch.ring); // a first sample now: errors surface to the caller
      } catch (RuntimeException | Error e) {
        dir.close(); // the capture thread, which closes it otherwise, never started
        throw e;
      }
      watch.registerMBean();
      watch.sampling.start();
      watch.capturing.start();
      watch.escalating.start();
      current = watch;
      LOG.log(System.Logger.Level.INFO, startMessage(options, dir.placement));
      return watch;
    }
  }

  /** Widest line of {@link #startMessage}. */
  static final int START_LINE_WIDTH = 100;

  /**
   * What the log says when a watch starts: a headline, then where bundles go and the settings, cut
   * at spaces into lines of at most {@link #START_LINE_WIDTH} characters (a word longer than that,
   * a long path, stands alone on its line).
   */
  static String startMessage(WatchOptions options, String placement) {
    StringBuilder out = new StringBuilder("nativemem memory watch started");
    for (String part : new String[] {placement, "settings: " + options}) {
      StringBuilder line = new StringBuilder();
      for (String word : part.split(" ")) {
        if (line.length() > 0 && line.length() + 1 + word.length() > START_LINE_WIDTH - 2) {
          out.append("\n  ").append(line);
          line.setLength(0);
        }
        line.append(line.length() == 0 ? "" : " ").append(word);
      }
      out.append("\n  ").append(line);
    }
    return out.toString();
  }

  /** The running watch, or null. */
  public static MemoryWatch current() {
    return current;
  }

  /**
   * Captures a full bundle now, whatever the triggers say and however recent the last one; returns
   * its directory.
   *
   * @throws NativeMemoryException if the watch directory is no longer safe or the bundle cannot be
   *     written (nothing is left half-written)
   */
  public Path capture(String reason) {
    try {
      return captureNow(Trigger.onDemand(reason));
    } catch (IOException | RuntimeException e) {
      throw new NativeMemoryException("memory watch: cannot capture a bundle: " + e, e);
    }
  }

  public WatchOptions options() {
    return options;
  }

  /**
   * The directory bundles go in (absolute): the one named, or the private {@code nativemem-<uid>}
   * made in it when it is shared. For messages: the watch itself uses only its open handle.
   */
  public Path directory() {
    return directory.path();
  }

  /** The bundle this watch captured last (of those written), or null. */
  public Path lastBundle() {
    return lastBundle;
  }

  /** Samples in the ring now. */
  public int samples() {
    return ring.size();
  }

  boolean isRunning() {
    return running;
  }

  /**
   * After {@link #close}: waits at most {@code timeout} for the captures under way to finish (and
   * the directory to be closed); returns whether they did.
   */
  boolean awaitCapturesDone(Duration timeout) throws InterruptedException {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (captureThreads.get() > 0) {
      if (System.nanoTime() >= deadline) {
        return false;
      }
      Thread.sleep(10);
    }
    return true;
  }

  /** Stops sampling; a capture under way finishes. */
  @Override
  public void close() {
    running = false;
    LockSupport.unpark(sampling);
    LockSupport.unpark(capturing);
    LockSupport.unpark(escalating);
    unregisterMBean();
    synchronized (STARTING) {
      if (current == this) {
        current = null;
      }
    }
  }

  private void sampleLoop() {
    long intervalNanos = options.interval().toNanos();
    long next = System.nanoTime();
    while (running) {
      next += intervalNanos;
      if (next - System.nanoTime() < 0) {
        next = System.nanoTime(); // fell behind (a stopped JVM): no burst of catch-up samples
      }
      for (long wait = next - System.nanoTime(); wait > 0 && running; ) {
        LockSupport.parkNanos(this, wait);
        wait = next - System.nanoTime();
      }
      if (!running) {
        return;
      }
      try {
        sampler.sampleInto(ring);
        Trigger trigger = triggers.evaluate(ring);
        if (trigger != null) {
          offer(trigger);
        }
      } catch (Throwable e) {
        logOnce("sampling failed (the watch keeps trying): ", e);
      }
    }
  }

  /**
   * Hands an automatic trigger to the capture thread unless one was captured too recently; within
   * the minimum interval, an escalation still passes ({@link #escalates}). A trigger declined says
   * why, at INFO. Called by the sampling thread (and by tests of this package, as the sampler
   * would).
   */
  void offer(Trigger trigger) {
    long now = System.nanoTime();
    boolean recent =
        capturedAutomatically && now - lastAutomaticNanos < options.minInterval().toNanos();
    Double threshold = trigger.thresholdPercent();
    boolean escalation =
        recent
            && (trigger.refresh()
                || escalates(threshold, incidentThreshold, (now - lastOfferNanos) / 1_000_000));
    if (recent && !escalation) {
      LOG.log(
          System.Logger.Level.INFO,
          "nativemem memory watch: "
              + trigger
              + ": no bundle, the incident's last was "
              + (now - lastAutomaticNanos) / 1_000_000_000
              + " s ago (under nativemem.watch.minIntervalSeconds="
              + options.minInterval().getSeconds()
              + ") and this crosses no higher limit threshold than it did, or did so "
              + (now - lastOfferNanos) / 1_000_000
              + " ms ago");
      return;
    }
    if (!recent) {
      capturedAutomatically = true;
      lastAutomaticNanos = now;
      incidentThreshold = 0;
    }
    if (threshold != null) {
      incidentThreshold = Math.max(incidentThreshold, threshold);
    }
    lastOfferNanos = now;
    if (escalation) {
      pendingEscalation.set(trigger);
      LockSupport.unpark(escalating);
    } else {
      pending.set(trigger);
      LockSupport.unpark(capturing);
    }
  }

  /**
   * Whether a trigger within the incident's minimum interval escalates it (as does a {@link
   * Trigger#refresh}, usage held above the highest threshold): a limit threshold higher than the
   * incident's highest so far, at once (the newest evidence stays close to the kill); or one at
   * least that high again {@link Triggers#TOP_REFRESH_MS} after the incident's last capture (back
   * above it after a dip of a point), so that a kill slow to come still finds evidence of its last
   * seconds.
   */
  static boolean escalates(Double threshold, double incidentThreshold, long sinceLastCaptureMs) {
    return threshold != null
        && (threshold > incidentThreshold
            || (threshold >= incidentThreshold && sinceLastCaptureMs >= Triggers.TOP_REFRESH_MS));
  }

  /**
   * The loop of a capture thread: the capture thread takes new incidents ({@code pending}), the
   * escalation thread their escalations, so that the newest evidence is never held up by the
   * incident's first, full bundle.
   */
  private void captureLoop(AtomicReference<Trigger> queue, boolean escalation) {
    while (running) {
      Trigger trigger = queue.getAndSet(null);
      if (trigger == null) {
        LockSupport.park(this);
        continue;
      }
      try {
        captureAutomatically(trigger, escalation);
      } catch (NotWritten e) {
        // logged where it was decided
      } catch (Throwable e) {
        logOnce("cannot write an incident bundle (the watch keeps running): ", e);
      }
    }
    if (captureThreads.decrementAndGet() == 0) {
      synchronized (captureLock) {
        directory.close();
      }
    }
  }

  /**
   * An automatic capture. An escalation takes the cheap parts only (timeline, breakdown, handles,
   * advice: what the last seconds before a kill leave time for; the incident's first bundle has the
   * heap profile and page) and replaces the incident's previous escalation, so an incident keeps at
   * most two bundles: its first and its newest.
   */
  private void captureAutomatically(Trigger trigger, boolean escalation) throws IOException {
    if (!escalation) {
      synchronized (captureLock) {
        escalationBundle = null;
      }
      captureNow(trigger, null);
      return;
    }
    Path written =
        captureNow(
            trigger,
            "an escalation of the incident near the limit: the cheap parts only, in the last"
                + " seconds (the incident's first bundle has the heap profile and page)");
    synchronized (captureLock) {
      String replaced = escalationBundle;
      escalationBundle = written.getFileName().toString();
      if (replaced != null && BundleName.PATTERN.matcher(replaced).matches()) {
        try {
          directory.handle.removeTree(replaced);
        } catch (RuntimeException e) {
          logOnce("cannot remove the incident's earlier escalation bundle: ", e);
        }
      }
    }
  }

  private Path captureNow(Trigger trigger) throws IOException {
    return captureNow(trigger, null);
  }

  /**
   * Writes a bundle. The directory's bookkeeping (its check, the previous bundle, room on the
   * volume, pruning) runs under the capture lock; the bundle itself is written outside it, so that
   * an escalation runs beside a full capture still under way.
   */
  private Path captureNow(Trigger trigger, String cheapOnly) throws IOException {
    DirectoryHandle dir;
    String previous;
    WatchDirectory.Ready room;
    synchronized (captureLock) {
      dir = directory.handle;
      room = directory.ready(options.profile());
      previous = room.previous;
      if (!room.removed.isEmpty()) {
        LOG.log(
            System.Logger.Level.INFO,
            "nativemem memory watch: removed "
                + room.removed.size()
                + " old bundle(s) to make room on the volume: "
                + room.removed);
      }
      if (room.skipped != null) {
        throw notWritten(trigger + "; " + room.skipped, null);
      }
    }
    Path written;
    try {
      written =
          bundle.write(
              dir, trigger, ring, previous, room.trimmed != null ? room.trimmed : cheapOnly);
    } catch (IOException e) {
      if (BundleParts.VolumeFull.isCause(e)) {
        throw notWritten(trigger + "; " + e.getMessage(), e);
      }
      throw e;
    }
    synchronized (captureLock) {
      // An escalation can finish before the full capture taken earlier: the newest is the one
      // captured last, not the one written last.
      Path last = lastBundle;
      if (last == null
          || BundleName.stamp(written.getFileName().toString())
                  .compareTo(BundleName.stamp(last.getFileName().toString()))
              >= 0) {
        lastBundle = written;
      }
      try {
        directory.prune(options.keep(), options.maxBytes(), written.getFileName().toString());
      } catch (RuntimeException e) {
        logOnce("cannot prune old bundles: ", e);
      }
    }
    LOG.log(
        System.Logger.Level.WARNING,
        "nativemem memory watch: "
            + trigger
            + "; incident bundle "
            + written
            + (room.trimmed == null ? "" : " (" + room.trimmed + ")"));
    return written;
  }

  /** A capture skipped or abandoned for want of space: said in the log here, not again. */
  private static final class NotWritten extends IOException {
    private static final long serialVersionUID = 1L;

    NotWritten(String message, Throwable cause) {
      super(message, cause);
    }
  }

  private static NotWritten notWritten(String message, Throwable cause) {
    LOG.log(System.Logger.Level.WARNING, "nativemem memory watch: " + message);
    return new NotWritten(message, cause);
  }

  /** Logs a failure once per message; never throws (the heap may be exhausted right now). */
  private void logOnce(String what, Throwable e) {
    try {
      log(what, e);
    } catch (Throwable ignored) {
      // the loops must outlive an OutOfMemoryError while reporting one
    }
  }

  private void log(String what, Throwable e) {
    String message = what + e;
    synchronized (logged) {
      if (logged.size() > 32 || !logged.add(message)) {
        return;
      }
    }
    LOG.log(System.Logger.Level.WARNING, "nativemem memory watch: " + message);
  }

  private void registerMBean() {
    if (RuntimeModules.JMX_ABSENCE != null) {
      logOnce("no " + MemoryWatchMXBean.OBJECT_NAME + ": " + RuntimeModules.JMX_ABSENCE, null);
      return;
    }
    try {
      mbean = Jmx.register(MemoryWatchMXBean.OBJECT_NAME, new MemoryWatchBean(this));
    } catch (RuntimeException e) {
      logOnce("cannot register " + MemoryWatchMXBean.OBJECT_NAME + ": ", e);
    }
  }

  private void unregisterMBean() {
    ObjectName name = mbean;
    mbean = null;
    if (name != null) {
      Jmx.unregister(name);
    }
  }

  /** {@code MemTotal} of {@code /proc/meminfo}: the limit when no cgroup sets one; -1 unknown. */
  private static long physicalMemory() {
    try (BufferedReader in =
        Files.newBufferedReader(Paths.get("/proc/meminfo"), StandardCharsets.US_ASCII)) {
      String line = in.readLine();
      if (line != null && line.startsWith("MemTotal:")) {
        String[] words = line.substring(9).trim().split("\\s+");
        return Long.parseLong(words[0]) * 1024;
      }
    } catch (IOException | RuntimeException e) {
      // unknown
    }
    return -1;
  }
}
