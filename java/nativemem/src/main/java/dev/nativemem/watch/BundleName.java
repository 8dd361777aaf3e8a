package dev.nativemem.watch;

import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A bundle's name read back, {@code nativemem-incident-<pid>-<UTC stamp>-<trigger>} ({@link
 * IncidentBundle#name}); the retention that lists and prunes bundles by it is the file layer's
 * ({@code rust/nativemem/src/jobs/watch_directory/names.rs}).
 */
final class BundleName {
  static final Pattern PATTERN =
      Pattern.compile(
          Pattern.quote(IncidentBundle.PREFIX)
              + "(\\d+)-(\\d{8}T\\d{6}Z)-(limit|growth|leaked-handles|on-demand)");

  private BundleName() {}

  /**
   * The UTC stamp in a bundle's name ({@code 20261207T031135Z}), which orders bundles by capture.
   */
  static String stamp(String bundle) {
    Matcher m = PATTERN.matcher(bundle);
    return m.matches() ? m.group(2) : "";
  }
}
