package dev.nativemem.base;

import java.util.Locale;

/**
 * How much the agent records per native handle: the agent argument {@code level=} or {@link
 * Setting#HANDLES_LEVEL}; {@code NativeHandles.trackingLevel()} says which is in effect.
 */
public enum TrackingLevel {
  /** Nothing: classes are not instrumented. */
  OFF,
  /** Counts and leaks per kind; no creation stacks. */
  COUNTS,
  /** Counts, and the creation stack of every Nth handle. */
  SAMPLED,
  /** Counts, and the creation stack of every handle. */
  FULL;

  /**
   * The level named {@code text} ({@code off}, {@code counts}, {@code sampled}, {@code full}; any
   * case).
   *
   * @throws IllegalArgumentException naming the valid words
   */
  public static TrackingLevel of(String text) {
    try {
      return valueOf(text.trim().toUpperCase(Locale.ROOT));
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException(
          "level '" + text + "' is not one of off, counts, sampled, full");
    }
  }

  /** The word the agent argument and the setting take: {@code sampled}. */
  public String word() {
    return name().toLowerCase(Locale.ROOT);
  }
}
