package dev.nativemem.watch;

import dev.nativemem.base.NativeMemoryException;
import dev.nativemem.internal.DirectoryHandle;
import dev.nativemem.internal.FileOwnership;
import java.nio.file.Path;

/**
 * The directory bundles go in, opened once through the file layer and used only through its handle
 * (SECURITY.md, "Watch directories on shared volumes"). The directory the user names is walked from
 * {@code /} without following another user's link and made 0700 if missing. If it is this user's
 * and no group or other user can write it, bundles go in it. If it is shared (root's or this
 * user's, writable by others, sticky or not: a Kubernetes {@code emptyDir} is 0777, a volume with
 * {@code fsGroup} 2777), bundles go in a private child {@code nativemem-<uid>} that nativemem makes
 * 0700 (or reuses, if it is this user's with no group or other bits), checked on its descriptor.
 * Another user's directory is refused. Since nothing is looked up by name again, another user on
 * the volume can at most move or delete bundles, never redirect a write or a deletion.
 */
final class WatchDirectory implements AutoCloseable {
  static final String FIX =
      "give the watch a directory of your own or a shared volume's directory (root's), e.g."
          + " -Dnativemem.watch.dir=/volume/incidents";

  /** The private directory made in a shared one: {@code nativemem-<uid>}. */
  static final String PRIVATE_PREFIX = "nativemem-";

  private static final int GROUP_OR_OTHER_WRITE = 0022;

  final DirectoryHandle handle;

  /** Where bundles go and what another user can do, said once when the watch starts. */
  final String placement;

  private WatchDirectory(DirectoryHandle handle, String placement) {
    this.handle = handle;
    this.placement = placement;
  }

  /** Opens (making it if missing) the directory {@code named} and decides where bundles go. */
  static WatchDirectory open(Path named) {
    DirectoryHandle dir = DirectoryHandle.openOrCreate(named);
    try {
      int me = FileOwnership.processUid();
      int owner = dir.ownerUid();
      int mode = dir.mode();
      if (owner == me && (mode & GROUP_OR_OTHER_WRITE) == 0) {
        return new WatchDirectory(
            dir,
            "bundles go in "
                + dir.path()
                + " (this user's, mode "
                + Integer.toOctalString(mode)
                + "), used through one open descriptor: another user can at most move or delete"
                + " bundles where a directory above lets them, never redirect a write or a"
                + " deletion");
      }
      if (owner != me && owner != 0) {
        throw new NativeMemoryException(
            dir.path()
                + " belongs to uid "
                + owner
                + ", not to this process (uid "
                + me
                + ") or root, so its owner could take what nativemem puts there; "
                + FIX);
      }
      String name = PRIVATE_PREFIX + me;
      DirectoryHandle mine = privateChild(dir, name);
      dir.close();
      return new WatchDirectory(
          mine,
          "bundles go in "
              + mine.path()
              + " (made by nativemem, mode 0700, used through one open descriptor) because "
              + named
              + " is shared (uid "
              + owner
              + ", mode "
              + Integer.toOctalString(mode)
              + "): another user of the volume can at most move or delete "
              + name
              + " and the bundles in it, never redirect a write or a deletion");
    } catch (RuntimeException e) {
      dir.close();
      throw e;
    }
  }

  private static DirectoryHandle privateChild(DirectoryHandle shared, String name) {
    if (!shared.has(name)) {
      try {
        return shared.makePrivateDirectory(name);
      } catch (RuntimeException e) {
        if (!shared.has(name)) {
          throw e;
        }
        // made meanwhile (another JVM of this user, or someone else): checked below
      }
    }
    DirectoryHandle existing;
    try {
      existing = shared.openDirectory(name);
    } catch (RuntimeException e) {
      throw new NativeMemoryException(
          shared.path().resolve(name)
              + " exists and is not a directory nativemem can use ("
              + e.getMessage()
              + "): remove it, or "
              + FIX,
          e);
    }
    if (existing.ownerUid() != FileOwnership.processUid() || (existing.mode() & 0077) != 0) {
      String problem =
          existing.path()
              + " exists but is not this user's private directory (uid "
              + existing.ownerUid()
              + ", mode "
              + Integer.toOctalString(existing.mode())
              + "): remove it, or "
              + FIX;
      existing.close();
      throw new NativeMemoryException(problem);
    }
    return existing;
  }

  /** Checks before each bundle, on the handle, that the directory is still private to us. */
  void check() {
    if (!handle.isPrivateToUs()) {
      throw new NativeMemoryException(
          handle.path()
              + " is no longer this user's alone (uid "
              + handle.ownerUid()
              + ", mode "
              + Integer.toOctalString(handle.mode())
              + "); "
              + FIX);
    }
  }

  Path path() {
    return handle.path();
  }

  @Override
  public void close() {
    handle.close();
  }
}
