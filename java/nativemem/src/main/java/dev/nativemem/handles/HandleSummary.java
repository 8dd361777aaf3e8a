package dev.nativemem.handles;

import dev.nativemem.internal.JsonBinding;
import java.util.List;

/**
 * The registry's summary (the {@code handles_summary} job), bound by {@link JsonBinding}: counts
 * per kind and cache capacities, what the memory breakdown shows. {@link HandleReport#of} makes a
 * report of it.
 */
final class HandleSummary {
  List<HandleReport.KindCount> kinds;
  long openCacheCapacityBytes;
  long zombieCacheCapacityBytes;

  /** Bound by {@link JsonBinding}: the fields are the keys of the registry's summary. */
  private HandleSummary() {}
}
