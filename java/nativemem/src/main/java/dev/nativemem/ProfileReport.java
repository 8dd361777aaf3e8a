package dev.nativemem;

import dev.nativemem.internal.ByteFormat;
import dev.nativemem.internal.Json;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

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
  private final List<Site> topFlat;
  private final List<Site> topCumulative;
  private final List<String> warnings;

  @SuppressWarnings("unchecked")
  ProfileReport(Map<String, Object> json, boolean difference) {
    this.difference = difference;
    this.totalBytes = Json.number(json, "total_bytes");
    this.totalObjects = Json.number(json, "total_objects");
    this.sampleIntervalBytes = Json.number(json, "sample_interval_bytes");
    this.stackCount = Json.number(json, "stack_count");
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
    List<Object> flat = new ArrayList<>();
    topFlat.forEach(s -> flat.add(s.toMap()));
    List<Object> cumulative = new ArrayList<>();
    topCumulative.forEach(s -> cumulative.add(s.toMap()));
    json.put("top_flat", flat);
    json.put("top_cumulative", cumulative);
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

    Site(Map<String, Object> json) {
      this.name = Json.string(json, "name");
      this.flatBytes = Json.number(json, "flat_bytes");
      this.flatObjects = Json.number(json, "flat_objects");
      this.cumulativeBytes = Json.number(json, "cumulative_bytes");
      this.cumulativeObjects = Json.number(json, "cumulative_objects");
      this.flatShare = ((Number) json.get("flat_share")).doubleValue();
      this.cumulativeShare = ((Number) json.get("cumulative_share")).doubleValue();
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
}
