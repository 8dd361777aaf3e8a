package dev.nativemem.internal;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;

/** Removing what nativemem itself wrote: a file or a whole directory, best effort. */
public final class FileTrees {
  private FileTrees() {}

  /**
   * Deletes {@code root} (a file, or a directory with everything below it), children first. Errors
   * are swallowed: callers use it for their own temporary or superseded files, where a leftover is
   * harmless and must never fail the operation that just succeeded.
   */
  public static void deleteQuietly(Path root) {
    // Plain recursion, not Files.walk: this runs at every library load (the previous JVM's
    // extraction directory), where a stream pipeline costs a start its class loading.
    try {
      if (Files.isDirectory(root, LinkOption.NOFOLLOW_LINKS)) {
        try (DirectoryStream<Path> children = Files.newDirectoryStream(root)) {
          for (Path child : children) {
            deleteQuietly(child);
          }
        }
      }
      Files.deleteIfExists(root);
    } catch (IOException | RuntimeException e) {
      // Best effort, as documented.
    }
  }
}
