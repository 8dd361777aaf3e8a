package dev.nativemem.demo;

import dev.nativemem.internal.ByteFormat;
import dev.nativemem.profile.ProfileReport;
import java.util.ArrayList;
import java.util.List;

/**
 * The lead of the demo's heap profile: the workload's own Java lines, each with the live native
 * memory allocated below it (its cumulative bytes). With Java frames on, a sampled stack reads
 * {@code malloc ← inflateInit2_ ← java.util.zip.Inflater.<init>(…) ← …
 * dev.nativemem.demo.ZipWorkload.run(ZipWorkload.java:NN)}: the last is the line a newcomer can
 * change.
 */
final class JavaOwners {
  /** The heading {@link #render} starts with when it found lines. */
  static final String HEADING = "Java lines that own the live native memory";

  private JavaOwners() {}

  /** The report's cumulative sites that are Java frames of {@code classes}, largest first. */
  static List<ProfileReport.Site> of(ProfileReport report, List<String> classes) {
    List<ProfileReport.Site> owners = new ArrayList<>();
    for (ProfileReport.Site site : report.topCumulative()) {
      for (String owner : classes) {
        if (site.name().startsWith(owner + ".") && site.name().endsWith(")")) {
          owners.add(site);
          break;
        }
      }
    }
    return owners;
  }

  /** The lines to print: a heading, then one line per owner (bytes, share of the total, line). */
  static List<String> render(ProfileReport report, List<String> classes) {
    List<ProfileReport.Site> owners = of(report, classes);
    List<String> out = new ArrayList<>();
    if (owners.isEmpty()) {
      out.add(
          "No sampled stack names the workload's Java lines (Java frames off or unavailable):"
              + " only the native sites below say where the memory is.");
      return out;
    }
    out.add(HEADING + " (with Java frames, estimated from samples):");
    out.add(String.format("  %10s %6s  %s", "bytes", "share", "allocated below this line"));
    for (ProfileReport.Site site : owners) {
      out.add(
          String.format(
              "  %10s %5.1f%%  %s",
              ByteFormat.human(site.cumulativeBytes()), site.cumulativeShare() * 100, site.name()));
    }
    return out;
  }
}
