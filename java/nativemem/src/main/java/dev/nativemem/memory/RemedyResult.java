package dev.nativemem.memory;

import dev.nativemem.internal.ByteFormat;
import dev.nativemem.internal.Json;
import java.util.Map;
import java.util.Optional;

/** What a remedy changed: resident bytes before and after. */
public final class RemedyResult {
  private final Map<String, Object> json;

  RemedyResult(Map<String, Object> json) {
    this.json = json;
    Json.string(json, "remedy");
  }

  /** {@code purge}, {@code set_decay}, {@code enable_background_threads}, ... */
  public String remedy() {
    return Json.string(json, "remedy");
  }

  /** {@code jemalloc} or {@code glibc}. */
  public String allocator() {
    return Json.string(json, "allocator");
  }

  /** jemalloc's {@code stats.resident} before; empty on glibc. */
  public Optional<Long> allocatorResidentBeforeBytes() {
    return Optional.ofNullable(Json.optionalNumber(json, "allocator_resident_before_bytes"));
  }

  /** jemalloc's {@code stats.resident} after; empty on glibc. */
  public Optional<Long> allocatorResidentAfterBytes() {
    return Optional.ofNullable(Json.optionalNumber(json, "allocator_resident_after_bytes"));
  }

  public long rssBeforeBytes() {
    return Json.number(json, "rss_before_bytes");
  }

  public long rssAfterBytes() {
    return Json.number(json, "rss_after_bytes");
  }

  public String detail() {
    return Json.string(json, "detail");
  }

  public String toJson() {
    return Json.write(json);
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
    return remedy()
        + " ("
        + allocator()
        + "): "
        + detail()
        + "; RSS "
        + ByteFormat.human(rssBeforeBytes())
        + " -> "
        + ByteFormat.human(rssAfterBytes())
        + resident;
  }
}
