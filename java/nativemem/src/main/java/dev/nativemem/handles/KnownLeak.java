package dev.nativemem.handles;

import dev.nativemem.handles.catalogue.LeakCatalogue;
import dev.nativemem.handles.tracking.HandleTracker;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * A leak that is known and accepted, with the reason: reported as known instead of failing a check.
 * Matches handles of one kind, optionally only those whose creation stack contains a fragment; or
 * an entry of nativemem's catalogue of known leaks, by its id ({@link #catalogued}).
 */
public final class KnownLeak {
  /** RocksDB never closes the {@code ReadOptions} it creates for itself: facebook/rocksdb#15036. */
  public static final KnownLeak ROCKSDB_DEFAULT_READ_OPTIONS = catalogued("facebook/rocksdb#15036");

  private final String kind;
  private final String stackFragment;
  private final String reason;
  private final LeakCatalogue.Entry entry;
  private final String because;

  private KnownLeak(String kind, String stackFragment, String reason, LeakCatalogue.Entry entry) {
    this(kind, stackFragment, reason, entry, "");
  }

  private KnownLeak(
      String kind, String stackFragment, String reason, LeakCatalogue.Entry entry, String because) {
    this.kind = Objects.requireNonNull(kind, "kind");
    this.stackFragment = stackFragment;
    this.reason = Objects.requireNonNull(reason, "reason");
    this.entry = entry;
    this.because = Objects.requireNonNull(because, "because").trim();
    if (reason.trim().isEmpty()) {
      throw new IllegalArgumentException("a known leak needs a reason");
    }
  }

  /** Every handle of {@code kind}, for the given reason. */
  public static KnownLeak ofKind(String kind, String reason) {
    return new KnownLeak(kind, null, reason, null);
  }

  /**
   * Handles of {@code kind} whose creation stack contains {@code stackFragment} (such as {@code
   * "com.example.Cache.<init>"}). Needs creation stacks: level {@code full}, or {@code sampled} for
   * the sampled ones.
   */
  public static KnownLeak at(String kind, String stackFragment, String reason) {
    return new KnownLeak(
        kind, Objects.requireNonNull(stackFragment, "stackFragment"), reason, null);
  }

  /**
   * The catalogue's entry {@code id} (such as {@code "FLINK-39753"}): its kind, created under its
   * frames, in a library version it affects.
   *
   * @throws IllegalArgumentException for an id the catalogue lacks, listing those it has
   */
  public static KnownLeak catalogued(String id) {
    return catalogued(id, "");
  }

  /**
   * The catalogue's entry {@code id}, accepted for {@code reason} (shown beside the entry's label
   * where the accepted handles are listed; empty for none).
   *
   * @throws IllegalArgumentException for an id the catalogue lacks, listing those it has
   */
  public static KnownLeak catalogued(String id, String reason) {
    LeakCatalogue.Entry entry = LeakCatalogue.get().entry(id);
    if (entry == null) {
      throw new IllegalArgumentException(
          "no known leak '" + id + "' in nativemem's catalogue; its ids are " + ids());
    }
    String label = entry.summary() + " (" + entry.id() + ")";
    String why = Objects.requireNonNull(reason, "reason").trim();
    return new KnownLeak(
        entry.kind(), null, why.isEmpty() ? label : label + ": " + why, entry, why);
  }

  /** Whether {@code id} names an entry of the catalogue. */
  public static boolean isCatalogued(String id) {
    return LeakCatalogue.get().entry(id) != null;
  }

  /** The ids of the catalogue's entries. */
  public static List<String> ids() {
    return LeakCatalogue.get().ids();
  }

  /**
   * The leaks accepted for the whole JVM by the agent's {@code known=} option (or {@code
   * -Dnativemem.handles.known}): catalogue entries by id, other words as kinds.
   */
  static List<KnownLeak> acceptedInThisJvm() {
    List<KnownLeak> accepted = new ArrayList<>();
    for (String word : HandleTracker.get().options().known()) {
      accepted.add(isCatalogued(word) ? catalogued(word) : ofKind(word, "accepted in this JVM"));
    }
    return accepted;
  }

  public String kind() {
    return kind;
  }

  public String reason() {
    return reason;
  }

  /** The catalogue id, or null for a leak given by kind. */
  public String id() {
    return entry == null ? null : entry.id();
  }

  /**
   * Why a handle of {@code kind} created at {@code stack} is accepted: an entry the catalogue marks
   * accepted, one of {@code known}, or one of {@code jvmWide} ({@link #acceptedInThisJvm}, read
   * once by the caller for all its handles); null when it is not. {@code catalogued} is the stack's
   * catalogue match.
   */
  static String acceptedReason(
      List<KnownLeak> known,
      List<KnownLeak> jvmWide,
      LeakCatalogue.Match catalogued,
      String kind,
      String stack) {
    if (catalogued != null && catalogued.entry().accepted()) {
      return catalogued.label();
    }
    for (KnownLeak k : known) {
      if (k.matches(kind, stack)) {
        if (k.id() != null && catalogued != null) {
          return k.because.isEmpty() ? catalogued.label() : catalogued.label() + ": " + k.because;
        }
        return k.reason();
      }
    }
    for (KnownLeak k : jvmWide) {
      if (k.matches(kind, stack)) {
        String label = k.id() != null && catalogued != null ? catalogued.label() + "; " : "";
        return label + "accepted in this JVM by known=" + (k.id() != null ? k.id() : k.kind);
      }
    }
    return null;
  }

  boolean matches(String kind, String stack) {
    if (entry != null) {
      LeakCatalogue.Match match = LeakCatalogue.get().match(kind, stack);
      return match != null && match.entry() == entry;
    }
    return this.kind.equals(kind) && (stackFragment == null || stack.contains(stackFragment));
  }

  @Override
  public String toString() {
    if (entry != null) {
      return entry.toString() + ": " + reason;
    }
    return kind + (stackFragment == null ? "" : " at " + stackFragment) + ": " + reason;
  }
}
