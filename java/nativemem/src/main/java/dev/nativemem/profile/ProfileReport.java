package dev.nativemem.profile;

import dev.nativemem.internal.ByteFormat;
import dev.nativemem.internal.Json;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;

/**
 * Top allocation sites of a heap profile (or growth since a base profile): totals, and sites by own
 * bytes (flat) and by bytes including callees (cumulative), as {@code jeprof --text} ranks them.
 * Bytes and objects are unbiased for sampling.
 */
public final class ProfileReport {
  private final boolean difference;
  private final long totalBytes;
  private final long totalObjects;
  private final long sampleIntervalBytes;
  private final long stackCount;
  private final long processCount;
  private final long baseProcessCount;
  private final List<Site> topFlat;
  private final List<Site> topCumulative;
  private final List<ProcessTotal> processes;
  private final List<String> warnings;

  @SuppressWarnings("unchecked")
  ProfileReport(Map<String, Object> json, boolean difference) {
    this.difference = difference;
    this.totalBytes = Json.number(json, "total_bytes");
    this.totalObjects = Json.number(json, "total_objects");
    this.sampleIntervalBytes = Json.number(json, "sample_interval_bytes");
    this.stackCount = Json.number(json, "stack_count");
    this.processCount = Json.number(json, "process_count");
    this.baseProcessCount = Json.number(json, "base_process_count");
    List<ProcessTotal> totals = new ArrayList<>();
    for (Object o : (List<Object>) json.get("processes")) {
      totals.add(new ProcessTotal((Map<String, Object>) o));
    }
    this.processes = Collections.unmodifiableList(totals);
    this.topFlat = sites((List<Object>) json.get("top_flat"));
    this.topCumulative = sites((List<Object>) json.get("top_cumulative"));
    List<String> w = new ArrayList<>();
    for (Object o : (List<Object>) json.get("warnings")) {
      w.add(String.valueOf(o));
    }
    this.warnings = Collections.unmodifiableList(w);
  }

  @SuppressWarnings("unchecked")
  private static List<Site> sites(List<Object> list) {
    List<Site> sites = new ArrayList<>();
    for (Object o : list) {
      sites.add(new Site((Map<String, Object>) o));
    }
    return Collections.unmodifiableList(sites);
  }

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
    Map<String, Object> json = new LinkedHashMap<>();
    json.put("difference", difference);
    json.put("total_bytes", totalBytes);
    json.put("total_objects", totalObjects);
    json.put("sample_interval_bytes", sampleIntervalBytes);
    json.put("stack_count", stackCount);
    json.put("process_count", processCount);
    json.put("base_process_count", baseProcessCount);
    List<Object> flat = new ArrayList<>();
    topFlat.forEach(s -> flat.add(s.toMap()));
    List<Object> cumulative = new ArrayList<>();
    topCumulative.forEach(s -> cumulative.add(s.toMap()));
    json.put("top_flat", flat);
    json.put("top_cumulative", cumulative);
    List<Object> totals = new ArrayList<>();
    processes.forEach(p -> totals.add(p.toMap()));
    json.put("processes", totals);
    json.put("warnings", warnings);
    return Json.write(json);
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
    private final String name;
    private final long flatBytes;
    private final long flatObjects;
    private final long cumulativeBytes;
    private final long cumulativeObjects;
    private final double flatShare;
    private final double cumulativeShare;
    private final long processes;

    Site(Map<String, Object> json) {
      this.name = Json.string(json, "name");
      this.flatBytes = Json.number(json, "flat_bytes");
      this.flatObjects = Json.number(json, "flat_objects");
      this.cumulativeBytes = Json.number(json, "cumulative_bytes");
      this.cumulativeObjects = Json.number(json, "cumulative_objects");
      this.flatShare = ((Number) json.get("flat_share")).doubleValue();
      this.cumulativeShare = ((Number) json.get("cumulative_share")).doubleValue();
      this.processes = Json.number(json, "processes");
    }

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

    Map<String, Object> toMap() {
      Map<String, Object> json = new LinkedHashMap<>();
      json.put("name", name);
      json.put("flat_bytes", flatBytes);
      json.put("flat_objects", flatObjects);
      json.put("cumulative_bytes", cumulativeBytes);
      json.put("cumulative_objects", cumulativeObjects);
      json.put("flat_share", flatShare);
      json.put("cumulative_share", cumulativeShare);
      json.put("processes", processes);
      return json;
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
    private final String dump;
    private final Long pid;
    private final String host;
    private final Long timeMs;
    private final long totalBytes;
    private final long topSiteBytes;
    private final double topSiteShare;

    ProcessTotal(Map<String, Object> json) {
      this.dump = Json.string(json, "dump");
      Object pid = json.get("pid");
      this.pid = pid == null ? null : ((Number) pid).longValue();
      this.host = (String) json.get("host");
      Object time = json.get("time_ms");
      this.timeMs = time == null ? null : ((Number) time).longValue();
      this.totalBytes = Json.number(json, "total_bytes");
      this.topSiteBytes = Json.number(json, "top_site_bytes");
      this.topSiteShare = ((Number) json.get("top_site_share")).doubleValue();
    }

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

    Map<String, Object> toMap() {
      Map<String, Object> json = new LinkedHashMap<>();
      json.put("dump", dump);
      json.put("pid", pid);
      json.put("host", host);
      json.put("time_ms", timeMs);
      json.put("total_bytes", totalBytes);
      json.put("top_site_bytes", topSiteBytes);
      json.put("top_site_share", topSiteShare);
      return json;
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
