package dev.nativemem;

import java.util.Objects;

/**
 * A leak that is known and accepted, with the reason: reported as known instead of failing a check.
 * Matches handles of one kind, optionally only those whose creation stack contains a fragment.
 */
public final class KnownLeak {
  /** RocksDB never closes the {@code ReadOptions} it creates for itself: facebook/rocksdb#15036. */
  public static final KnownLeak ROCKSDB_DEFAULT_READ_OPTIONS =
      new KnownLeak(
          "ReadOptions",
          "org.rocksdb.RocksDB.<init>",
          "RocksDB never closes its own defaultReadOptions_ (facebook/rocksdb#15036)");

  private final String kind;
  private final String stackFragment;
  private final String reason;

  private KnownLeak(String kind, String stackFragment, String reason) {
    this.kind = Objects.requireNonNull(kind, "kind");
    this.stackFragment = stackFragment;
    this.reason = Objects.requireNonNull(reason, "reason");
    if (reason.trim().isEmpty()) {
      throw new IllegalArgumentException("a known leak needs a reason");
    }
  }

  /** Every handle of {@code kind}, for the given reason. */
  public static KnownLeak ofKind(String kind, String reason) {
    return new KnownLeak(kind, null, reason);
  }

  /**
   * Handles of {@code kind} whose creation stack contains {@code stackFragment} (such as {@code
   * "com.example.Cache.<init>"}). Needs creation stacks: level {@code full}, or {@code sampled} for
   * the sampled ones.
   */
  public static KnownLeak at(String kind, String stackFragment, String reason) {
    return new KnownLeak(kind, Objects.requireNonNull(stackFragment, "stackFragment"), reason);
  }

  public String kind() {
    return kind;
  }

  public String reason() {
    return reason;
  }

  boolean matches(String kind, String stack) {
    return this.kind.equals(kind) && (stackFragment == null || stack.contains(stackFragment));
  }

  @Override
  public String toString() {
    return kind + (stackFragment == null ? "" : " at " + stackFragment) + ": " + reason;
  }
}
