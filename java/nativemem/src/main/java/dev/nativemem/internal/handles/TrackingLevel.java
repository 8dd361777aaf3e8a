package dev.nativemem.internal.handles;

import java.util.Locale;

/** How much the agent records per handle. */
public enum TrackingLevel {
  /** Nothing: classes are not instrumented. */
  OFF,
  /** Counts and leaks per kind; no creation stacks. */
  COUNTS,
  /** Counts, and the creation stack of every Nth handle. */
  SAMPLED,
  /** Counts, and the creation stack of every handle. */
  FULL;

  static TrackingLevel parse(String text) {
    try {
      return valueOf(text.trim().toUpperCase(Locale.ROOT));
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException(
          "level '" + text + "' is not one of off, counts, sampled, full");
    }
  }

  public String word() {
    return name().toLowerCase(Locale.ROOT);
  }
}
