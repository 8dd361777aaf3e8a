package dev.nativemem.watch;

import dev.nativemem.internal.DirectoryHandle;
import dev.nativemem.internal.Json;
import dev.nativemem.internal.NativeBridge;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

/**
 * The directory bundles go in, opened once by the file layer and used only through its handle
 * (SECURITY.md, "Watch directories on shared volumes"): where it goes, the private child made in a
 * shared directory and the checks on its descriptor are the job {@code watch_directory_open}'s
 * ({@code rust/nativemem/src/jobs/watch_directory/placement.rs}); before each capture the job
 * {@code watch_directory_ready} checks it again, finds this process's previous bundle and makes
 * room on the volume ({@code room.rs}); after it {@code watch_directory_prune} keeps it bounded
 * ({@code retention.rs}).
 */
final class WatchDirectory implements AutoCloseable {
  final DirectoryHandle handle;

  /** Where bundles go and what another user can do, said once when the watch starts. */
  final String placement;

  private WatchDirectory(DirectoryHandle handle, String placement) {
    this.handle = handle;
    this.placement = placement;
  }

  /**
   * Opens (making it if missing) the directory {@code named} and decides where bundles go.
   *
   * @throws dev.nativemem.base.NativeMemoryException if it cannot be used, saying what to do
   */
  static WatchDirectory open(Path named) {
    Map<String, Object> opened =
        Json.parseObject(
            NativeBridge.call(
                "watch_directory_open", Map.of("path", named.toAbsolutePath().toString())));
    DirectoryHandle handle =
        DirectoryHandle.adopt(
            ((Number) opened.get("directory")).longValue(), Path.of((String) opened.get("path")));
    return new WatchDirectory(handle, (String) opened.get("placement"));
  }

  /**
   * Before a capture: the directory checked to be this user's alone still, this process's previous
   * bundle (null if none, or if it was removed to make room) and the room the capture has.
   */
  Ready ready(boolean profile) {
    Map<String, Object> ready =
        Json.parseObject(
            handle.call(
                "watch_directory_ready",
                Map.of("pid", ProcessHandle.current().pid(), "profile", profile)));
    return new Ready(
        (String) ready.get("previous"),
        (String) ready.get("trimmed"),
        (String) ready.get("skipped"),
        Json.strings(ready.get("removed")));
  }

  /**
   * Removes the oldest of our bundles until at most {@code keep} remain and they take at most
   * {@code maxBytes}; {@code newest} always stays. Returns the names removed.
   */
  List<String> prune(int keep, long maxBytes, String newest) {
    return Json.strings(
        Json.parse(
            handle.call(
                "watch_directory_prune",
                Map.of("keep", keep, "max_bytes", maxBytes, "newest", newest))));
  }

  Path path() {
    return handle.path();
  }

  @Override
  public void close() {
    handle.close();
  }

  /**
   * What a capture may write: all, a trimmed bundle ({@code trimmed} says why), or nothing ({@code
   * skipped} says why); the previous bundle of this process; the bundles removed to make room.
   */
  static final class Ready {
    final String previous;
    final String trimmed;
    final String skipped;
    final List<String> removed;

    Ready(String previous, String trimmed, String skipped, List<String> removed) {
      this.previous = previous;
      this.trimmed = trimmed;
      this.skipped = skipped;
      this.removed = removed;
    }
  }
}
