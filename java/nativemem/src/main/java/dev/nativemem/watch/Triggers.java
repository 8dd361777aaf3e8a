package dev.nativemem.watch;

import dev.nativemem.internal.ByteFormat;
import java.util.List;
import java.util.Locale;

/**
 * Decides after each sample whether to capture: usage crossing a fraction of the limit, growth that
 * would reach the limit soon, a jump in leaked handles. Each trigger fires once and is re-armed
 * when its condition no longer holds. Nothing is allocated unless one fires. Used by the sampling
 * thread only.
 *
 * <p>The limit is the memory cgroup's, and usage the cgroup's; without a cgroup limit, the host's
 * physical memory and this process's RSS stand in (the manifest says so).
 */
final class Triggers {
  /** A threshold re-arms once usage is this far (a fraction of the limit) below it. */
  static final double REARM_GAP = 0.01;

  /**
   * While usage stays above the highest threshold, the limit trigger fires again this long after it
   * last did: a process held at its limit (the kernel reclaiming its page cache, the allocator's
   * retained pages) can live for many seconds more before the kill, and the newest evidence must
   * stay within a few seconds of it.
   */
  static final long TOP_REFRESH_MS = 3_000;

  /** Leaked handles are compared with the sample this long ago. */
  static final long LEAK_WINDOW_MS = 60_000;

  /** The fit must explain this share of the variance: growth, not noise. */
  static final double MIN_R_SQUARED = 0.8;

  private final double[] thresholds;
  private final double[] thresholdsPercent;
  private final boolean[] armed;

  /** When the highest threshold last fired (sample time), while usage stays above it. */
  private long topFiredAt;

  /**
   * How long after {@link #topFiredAt} the sample that refreshes may come: {@link #TOP_REFRESH_MS}
   * less half a sampling interval, so the sample due then refreshes though it is a few milliseconds
   * early against one that came late (the sampler's own jitter), not the one a second after it.
   */
  private final long refreshAfterMs;

  private final long growthWindowMs;
  private final long horizonMs;
  private boolean growthArmed = true;
  private final long leakedJump;
  private boolean leakArmed = true;
  private final long physicalMemory;

  Triggers(WatchOptions options, long physicalMemory) {
    List<Double> percents = options.thresholdsPercent();
    this.thresholds = new double[percents.size()];
    this.thresholdsPercent = new double[percents.size()];
    this.armed = new boolean[percents.size()];
    for (int i = 0; i < thresholds.length; i++) {
      thresholdsPercent[i] = percents.get(i);
      thresholds[i] = percents.get(i) / 100; // compared with usage / limit
      armed[i] = true;
    }
    this.refreshAfterMs = Math.max(0, TOP_REFRESH_MS - options.interval().toMillis() / 2);
    this.growthWindowMs = options.growthWindow().toMillis();
    this.horizonMs = options.growthHorizon().toMillis();
    this.leakedJump = options.leakedJump();
    this.physicalMemory = physicalMemory;
  }

  /** The limit the triggers compare with in sample {@code back}: the cgroup's, else the host's. */
  long limit(SampleRing ring, int back) {
    long cgroup = ring.back(back, SampleRing.LIMIT);
    return cgroup >= 0 ? cgroup : physicalMemory;
  }

  /** Usage against {@link #limit}: the cgroup's with a cgroup limit, else RSS. */
  static long usage(SampleRing ring, int back) {
    return ring.back(back, SampleRing.LIMIT) >= 0
        ? ring.back(back, SampleRing.USAGE)
        : ring.back(back, SampleRing.RSS);
  }

  /** What the newest sample triggers, or null. */
  Trigger evaluate(SampleRing ring) {
    if (ring.size() == 0) {
      return null;
    }
    Trigger limit = limitCrossing(ring);
    Trigger growth = growth(ring);
    Trigger leaks = leakJump(ring);
    // Every check runs (so each re-arms); the most pressing one is reported.
    return limit != null ? limit : growth != null ? growth : leaks;
  }

  private Trigger limitCrossing(SampleRing ring) {
    long limit = limit(ring, 0);
    long usage = usage(ring, 0);
    if (limit <= 0 || usage < 0) {
      return null;
    }
    double share = (double) usage / limit;
    int fired = -1;
    for (int i = 0; i < thresholds.length; i++) {
      if (share >= thresholds[i]) {
        if (armed[i]) {
          fired = i;
        }
        armed[i] = false;
      } else if (share < thresholds[i] - REARM_GAP) {
        armed[i] = true;
      }
    }
    int top = thresholds.length - 1;
    long now = ring.back(0, SampleRing.TIME);
    if (fired == top) {
      topFiredAt = now;
    } else if (fired < 0 && top >= 0 && !armed[top] && now - topFiredAt >= refreshAfterMs) {
      topFiredAt = now;
      return new Trigger(
          Trigger.Kind.LIMIT,
          String.format(
              Locale.ROOT,
              "usage %.1f%% of the %s %s (above %.0f%% for %d s: the evidence taken again)",
              share * 100,
              ByteFormat.human(limit),
              limitName(ring),
              thresholdsPercent[top],
              (now - firstAboveTop(ring, thresholds[top])) / 1000),
          thresholdsPercent[top],
          true);
    }
    if (fired < 0) {
      return null;
    }
    return new Trigger(
        Trigger.Kind.LIMIT,
        String.format(
            Locale.ROOT,
            "usage %.1f%% of the %s %s (crossed %.0f%%)",
            share * 100,
            ByteFormat.human(limit),
            limitName(ring),
            thresholdsPercent[fired]),
        thresholdsPercent[fired]);
  }

  /** The time of the oldest sample of the newest run of samples at or above {@code share}. */
  private long firstAboveTop(SampleRing ring, double share) {
    long first = ring.back(0, SampleRing.TIME);
    for (int back = 0; back < ring.size(); back++) {
      long limit = limit(ring, back);
      long usage = usage(ring, back);
      if (limit <= 0 || usage < 0 || (double) usage / limit < share - REARM_GAP) {
        break;
      }
      first = ring.back(back, SampleRing.TIME);
    }
    return first;
  }

  private String limitName(SampleRing ring) {
    return ring.back(0, SampleRing.LIMIT) >= 0
        ? "memory cgroup limit"
        : "physical memory (no cgroup limit; usage is RSS)";
  }

  /** Least squares over the samples of the window: slope, and how well a line explains them. */
  private Trigger growth(SampleRing ring) {
    if (growthWindowMs <= 0) {
      return null;
    }
    long now = ring.back(0, SampleRing.TIME);
    double n = 0;
    double sumT = 0;
    double sumU = 0;
    double sumTT = 0;
    double sumTU = 0;
    double sumUU = 0;
    long first = now;
    for (int back = 0; back < ring.size(); back++) {
      long t = ring.back(back, SampleRing.TIME);
      if (now - t > growthWindowMs) {
        break;
      }
      long u = usage(ring, back);
      if (u < 0) {
        continue;
      }
      double x = (t - now) / 1000.0; // seconds, 0 now
      double y = u / 1048576.0; // MiB, keeps the sums well conditioned
      n++;
      sumT += x;
      sumU += y;
      sumTT += x * x;
      sumTU += x * y;
      sumUU += y * y;
      first = t;
    }
    long limit = limit(ring, 0);
    // A line needs a span: at least half the window, and ten points.
    if (n < 10 || now - first < growthWindowMs / 2 || limit <= 0) {
      growthArmed = true;
      return null;
    }
    double varT = n * sumTT - sumT * sumT;
    double varU = n * sumUU - sumU * sumU;
    double cov = n * sumTU - sumT * sumU;
    double slope = cov / varT; // MiB per second
    double rSquared = varU <= 0 ? 0 : (cov * cov) / (varT * varU);
    double fittedNow = (sumU - slope * sumT) / n; // the line at x = 0
    double secondsToLimit = (limit / 1048576.0 - fittedNow) / slope;
    boolean soon =
        slope > 0
            && rSquared >= MIN_R_SQUARED
            && secondsToLimit >= 0
            && secondsToLimit * 1000 <= horizonMs;
    if (!soon) {
      growthArmed = true;
      return null;
    }
    if (!growthArmed) {
      return null;
    }
    growthArmed = false;
    return new Trigger(
        Trigger.Kind.GROWTH,
        String.format(
            Locale.ROOT,
            "usage grew %.1f MiB/min over the last %d s (r^2 %.2f); at this rate it reaches the %s"
                + " %s in %.1f min",
            slope * 60,
            (now - first) / 1000,
            rSquared,
            ByteFormat.human(limit),
            limitName(ring),
            secondsToLimit / 60),
        null);
  }

  private Trigger leakJump(SampleRing ring) {
    long leakedNow = ring.back(0, SampleRing.HANDLES_LEAKED);
    if (leakedJump <= 0 || leakedNow < 0) {
      return null;
    }
    long now = ring.back(0, SampleRing.TIME);
    long before = -1;
    for (int back = 0; back < ring.size(); back++) {
      if (now - ring.back(back, SampleRing.TIME) > LEAK_WINDOW_MS) {
        break;
      }
      long leaked = ring.back(back, SampleRing.HANDLES_LEAKED);
      if (leaked >= 0) {
        before = leaked;
      }
    }
    long jump = leakedNow - before;
    if (before < 0 || jump < leakedJump) {
      leakArmed = true;
      return null;
    }
    if (!leakArmed) {
      return null;
    }
    leakArmed = false;
    return new Trigger(
        Trigger.Kind.LEAKED_HANDLES,
        jump + " handles leaked in the last minute (" + leakedNow + " in all)",
        null);
  }
}
