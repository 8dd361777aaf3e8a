package dev.nativemem.watch;

import dev.nativemem.internal.ByteFormat;
import dev.nativemem.internal.DirectoryHandle;
import java.util.List;

/**
 * Room for a capture on the watch's volume ({@code fstatvfs} through the directory's handle), on
 * top of {@code nativemem.watch.keep} and {@code nativemem.watch.maxMiB}. A capture needs about the
 * size of this process's previous bundle, and at least 16 MiB with a heap profile, 1 MiB without,
 * and nativemem keeps a margin free for the application: 1/32 of the volume, at least 256 KiB and
 * at most 64 MiB. When free space is short, our oldest bundles (never the newest) are removed
 * first; if it is still short, the capture is trimmed (no heap profile, page or raw allocator
 * statistics: the small JSON verdict, timeline, snapshot, handles and advice stay, about 256 KiB at
 * most) or, below that, skipped. An {@code emptyDir}'s {@code sizeLimit} is not a file system limit
 * and does not show here: {@code nativemem.watch.maxMiB} is the bound for it.
 */
final class FreeSpace {
  static final long MIN_MARGIN_BYTES = 256L << 10;
  static final long MAX_MARGIN_BYTES = 64L << 20;
  static final long TRIMMED_BYTES = 256L << 10;
  static final long FIRST_WITH_PROFILE_BYTES = 16L << 20;
  static final long FIRST_WITHOUT_PROFILE_BYTES = 1L << 20;

  /** What a capture may write: all, a trimmed bundle (with the reason), or nothing. */
  static final class Room {
    final String trimmed;
    final String skipped;
    final List<String> removed;

    private Room(String trimmed, String skipped, List<String> removed) {
      this.trimmed = trimmed;
      this.skipped = skipped;
      this.removed = removed;
    }
  }

  private FreeSpace() {}

  static long margin(long totalBytes) {
    return Math.max(MIN_MARGIN_BYTES, Math.min(MAX_MARGIN_BYTES, totalBytes / 32));
  }

  /** Decides, removing our oldest bundles first when free space is short. */
  static Room decide(DirectoryHandle dir, String previous, boolean profile) {
    long need = profile ? FIRST_WITH_PROFILE_BYTES : FIRST_WITHOUT_PROFILE_BYTES;
    if (previous != null) {
      need = Math.max(need, Retention.size(dir, previous));
    }
    long margin = margin(dir.totalBytes());
    List<String> removed = List.of();
    if (dir.freeBytes() < need + margin) {
      removed = Retention.makeRoom(dir, need + margin);
    }
    long free = dir.freeBytes();
    if (free >= need + margin) {
      return new Room(null, null, removed);
    }
    String state =
        ByteFormat.human(free)
            + " free on the volume of "
            + dir.path()
            + " (nativemem keeps "
            + ByteFormat.human(margin)
            + " free for the application; a full bundle needs about "
            + ByteFormat.human(need)
            + ")";
    if (free >= TRIMMED_BYTES + margin) {
      return new Room(
          "trimmed: "
              + state
              + "; the heap profile, the page and the raw allocator statistics left out",
          null,
          removed);
    }
    return new Room(null, "capture skipped: " + state, removed);
  }
}
