package dev.nativemem.profile;

import dev.nativemem.internal.ByteFormat;
import dev.nativemem.internal.JsonBinding;
import java.time.Instant;
import java.util.List;
import java.util.Locale;
import java.util.Optional;

/**
 * Top allocation sites of a heap profile (or growth since a base profile): totals, and sites by own
 * bytes (flat) and by bytes including callees (cumulative), as {@code jeprof --text} ranks them.
 * Bytes and objects are unbiased for sampling.
 */
public final class ProfileReport {
  private boolean difference;
  private long totalBytes;
  private long totalObjects;
  private long sampleIntervalBytes;
  private long stackCount;
  private long processCount;
  private long baseProcessCount;
  private List<Site> topFlat;
  private List<Site> topCumulative;
  private List<ProcessTotal> processes;
  private List<String> warnings;

  /** Bound by {@link JsonBinding}: the fields are the keys of the native library's JSON. */
  private ProfileReport() {}

  /** True for growth since a base profile; figures may then be negative. */
  public boolean isDifference() {
    return difference;
  }

  /** Dumps (one per process) merged into the figures; with a base, the current ones. */
  public long processCount() {
    return processCount;
  }

  /**
   * Base dumps of a difference, whose figures are then per-process averages (current minus base); 0
   * without a base.
   */
  public long baseProcessCount() {
    return baseProcessCount;
  }

  /**
   * Each process's total and its part of the top flat site, when the request asked for them ({@link
   * ProfileRequest#byProcess()}); empty otherwise.
   */
  public List<ProcessTotal> processes() {
    return processes;
  }

  /** Unbiased in-use bytes (growth for a difference), as jeprof totals them. */
  public long totalBytes() {
    return totalBytes;
  }

  public long totalObjects() {
    return totalObjects;
  }

  public long sampleIntervalBytes() {
    return sampleIntervalBytes;
  }

  public long stackCount() {
    return stackCount;
  }

  /** Sites by their own bytes, largest first. */
  public List<Site> topFlat() {
    return topFlat;
  }

  /** Sites by bytes including their callees, largest first. */
  public List<Site> topCumulative() {
    return topCumulative;
  }

  /** What was odd in the dump (truncated, unreadable libraries, ...); empty when all is well. */
  public List<String> warnings() {
    return warnings;
  }

  public String toJson() {
    return JsonBinding.write(this);
  }

  @Override
  public String toString() {
    StringBuilder out = new StringBuilder();
    out.append(difference ? "Growth " : "In use ")
        .append(ByteFormat.human(totalBytes))
        .append(" in ")
        .append(stackCount)
        .append(" stacks\n");
    for (Site site : topFlat) {
      out.append(
          String.format(
              Locale.ROOT,
              "  %10s %5.1f%%  %10s %5.1f%%  %s%n",
              ByteFormat.human(site.flatBytes()),
              site.flatShare() * 100,
              ByteFormat.human(site.cumulativeBytes()),
              site.cumulativeShare() * 100,
              site.name()));
    }
    for (String warning : warnings) {
      out.append("  warning: ").append(warning).append('\n');
    }
    return out.toString();
  }

  /** One function's share of a profile. */
  public static final class Site {
    private String name;
    private long flatBytes;
    private long flatObjects;
    private long cumulativeBytes;
    private long cumulativeObjects;
    private double flatShare;
    private double cumulativeShare;
    private long processes;

    private Site() {}

    /** In how many of the report's processes (dumps) this function is on a sampled stack. */
    public long processes() {
      return processes;
    }

    /** The function (C++ without arguments, Java methods as {@code pkg.Class::method}). */
    public String name() {
      return name;
    }

    /** Bytes allocated by this function itself. */
    public long flatBytes() {
      return flatBytes;
    }

    public long flatObjects() {
      return flatObjects;
    }

    /** Bytes allocated by this function and everything it called. */
    public long cumulativeBytes() {
      return cumulativeBytes;
    }

    public long cumulativeObjects() {
      return cumulativeObjects;
    }

    /** {@link #flatBytes()} as a fraction of the total. */
    public double flatShare() {
      return flatShare;
    }

    /** {@link #cumulativeBytes()} as a fraction of the total. */
    public double cumulativeShare() {
      return cumulativeShare;
    }

    @Override
    public String toString() {
      return name
          + " "
          + ByteFormat.human(flatBytes)
          + " flat, "
          + ByteFormat.human(cumulativeBytes)
          + " cumulative";
    }
  }

  /** One dump of a merged report: its process, its total and its part of the top flat site. */
  public static final class ProcessTotal {
    private String dump;
    private Long pid;
    private String host;
    private Long timeMs;
    private long totalBytes;
    private long topSiteBytes;
    private double topSiteShare;

    private ProcessTotal() {}

    /** The dump file. */
    public String dump() {
      return dump;
    }

    /** The process id its sidecar names, if it has one. */
    public Optional<Long> pid() {
      return Optional.ofNullable(pid);
    }

    /** The host its sidecar names, if it has one. */
    public Optional<String> host() {
      return Optional.ofNullable(host);
    }

    /** When the dump was taken, as its sidecar says. */
    public Optional<Instant> time() {
      return Optional.ofNullable(timeMs).map(Instant::ofEpochMilli);
    }

    /** Unbiased in-use bytes of this dump. */
    public long totalBytes() {
      return totalBytes;
    }

    /** Its own bytes at the report's top flat site. */
    public long topSiteBytes() {
      return topSiteBytes;
    }

    /** {@link #topSiteBytes()} as a fraction of that site's bytes over all processes. */
    public double topSiteShare() {
      return topSiteShare;
    }

    @Override
    public String toString() {
      return dump
          + " "
          + ByteFormat.human(totalBytes)
          + ", top site "
          + ByteFormat.human(topSiteBytes);
    }
  }
}
