package dev.nativemem.watch;

import dev.nativemem.internal.FileOwnership;
import java.io.IOException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;

/**
 * The watch directory, checked as every directory nativemem writes into (SECURITY.md): this user's,
 * not a link, writable by no other user, and nobody else able to swap it or a directory above it.
 * Created 0700 when missing.
 */
final class WatchDirectory {
  static final String FIX =
      "give the watch a directory of your own that no other user can write, e.g."
          + " -Dnativemem.watch.dir=$HOME/nativemem-incidents";

  private WatchDirectory() {}

  /** Creates {@code dir} if missing and checks it; returns its absolute path. */
  static Path prepare(Path dir) throws IOException {
    Path absolute = dir.toAbsolutePath().normalize();
    Path parent = absolute.getParent();
    if (parent != null && !Files.isDirectory(parent)) {
      Files.createDirectories(parent);
    }
    try {
      Files.createDirectory(
          absolute,
          PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
    } catch (FileAlreadyExistsException e) {
      // checked below, whoever made it
    }
    check(absolute);
    return absolute;
  }

  /** Checks {@code dir} again before each bundle: a directory can change hands. */
  static void check(Path dir) throws IOException {
    FileOwnership.requireOwnDirectory(dir, FIX);
    FileOwnership.requireNoOtherWriterAbove(dir, FIX);
  }
}
