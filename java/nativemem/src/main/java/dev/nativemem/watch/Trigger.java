package dev.nativemem.watch;

import dev.nativemem.base.text.TerminalText;
import java.util.Locale;
import java.util.Objects;

/** Why the watch captured a bundle: a kind, a sentence for people, and the threshold if any. */
final class Trigger {
  /** The kinds of trigger, named as in a bundle's directory and manifest. */
  enum Kind {
    /** Usage crossed a threshold, a percentage of the memory limit. */
    LIMIT,
    /** A line fitted to recent usage reaches the limit soon. */
    GROWTH,
    /** Many handles were newly found leaked. */
    LEAKED_HANDLES,
    /** Asked for: API, JMX, or {@code nativemem attach <pid> incident}. */
    ON_DEMAND;

    /** {@code limit}, {@code growth}, {@code leaked-handles}, {@code on-demand}. */
    public String word() {
      return name().toLowerCase(Locale.ROOT).replace('_', '-');
    }
  }

  private final Kind kind;
  private final String detail;
  private final Double thresholdPercent;
  private final boolean refresh;

  Trigger(Kind kind, String detail, Double thresholdPercent) {
    this(kind, detail, thresholdPercent, false);
  }

  Trigger(Kind kind, String detail, Double thresholdPercent, boolean refresh) {
    this.kind = Objects.requireNonNull(kind, "kind");
    this.detail = Objects.requireNonNull(detail, "detail");
    this.thresholdPercent = thresholdPercent;
    this.refresh = refresh;
  }

  static Trigger onDemand(String reason) {
    String text = reason == null || reason.trim().isEmpty() ? "asked for" : reason.trim();
    return new Trigger(Kind.ON_DEMAND, text, null);
  }

  public Kind kind() {
    return kind;
  }

  /** What was seen, e.g. "usage 95.2% of the 512 MiB limit". */
  public String detail() {
    return detail;
  }

  /**
   * The threshold crossed, in percent of the limit ({@code 85.0}), for {@link Kind#LIMIT}; null for
   * the other kinds.
   */
  public Double thresholdPercent() {
    return thresholdPercent;
  }

  /**
   * Whether this is usage still above the highest threshold, some seconds after it fired: the
   * incident's newest evidence is taken again, so that it stays close to a kill that is slow to
   * come.
   */
  boolean refresh() {
    return refresh;
  }

  /**
   * The kind and the detail for one log line: an on-demand reason comes from whoever asked (the
   * API, JMX, {@code attach}), so its control characters and line breaks are shown escaped.
   */
  @Override
  public String toString() {
    return kind.word() + ": " + TerminalText.escapeLine(detail);
  }
}
