package dev.nativemem.memory;

import dev.nativemem.internal.ByteFormat;
import dev.nativemem.internal.JsonBinding;
import java.util.Optional;

/** What a remedy changed: resident bytes before and after. */
public final class RemedyResult {
  private String remedy;
  private String allocator;
  private Long allocatorResidentBeforeBytes;
  private Long allocatorResidentAfterBytes;
  private long rssBeforeBytes;
  private long rssAfterBytes;
  private String detail;

  /** Bound by {@link JsonBinding}: the fields are the keys of the native library's JSON. */
  private RemedyResult() {}

  /** {@code purge}, {@code set_decay}, {@code enable_background_threads}, ... */
  public String remedy() {
    return remedy;
  }

  /** {@code jemalloc} or {@code glibc}. */
  public String allocator() {
    return allocator;
  }

  /** jemalloc's {@code stats.resident} before; empty on glibc. */
  public Optional<Long> allocatorResidentBeforeBytes() {
    return Optional.ofNullable(allocatorResidentBeforeBytes);
  }

  /** jemalloc's {@code stats.resident} after; empty on glibc. */
  public Optional<Long> allocatorResidentAfterBytes() {
    return Optional.ofNullable(allocatorResidentAfterBytes);
  }

  public long rssBeforeBytes() {
    return rssBeforeBytes;
  }

  public long rssAfterBytes() {
    return rssAfterBytes;
  }

  public String detail() {
    return detail;
  }

  public String toJson() {
    return JsonBinding.write(this);
  }

  @Override
  public String toString() {
    String resident =
        allocatorResidentBeforeBytes()
            .map(
                before ->
                    ", allocator resident "
                        + ByteFormat.human(before)
                        + " -> "
                        + ByteFormat.human(allocatorResidentAfterBytes().orElse(0L)))
            .orElse("");
    return remedy
        + " ("
        + allocator
        + "): "
        + detail
        + "; RSS "
        + ByteFormat.human(rssBeforeBytes)
        + " -> "
        + ByteFormat.human(rssAfterBytes)
        + resident;
  }
}
