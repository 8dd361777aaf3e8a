package dev.nativemem.internal;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.stream.Stream;

/** Removing what nativemem itself wrote: a file or a whole directory, best effort. */
public final class FileTrees {
  private FileTrees() {}

  /**
   * Deletes {@code root} (a file, or a directory with everything below it), children first. Errors
   * are swallowed: callers use it for their own temporary or superseded files, where a leftover is
   * harmless and must never fail the operation that just succeeded.
   */
  public static void deleteQuietly(Path root) {
    try (Stream<Path> walk = Files.walk(root)) {
      for (Path p : (Iterable<Path>) walk.sorted(Comparator.reverseOrder())::iterator) {
        Files.deleteIfExists(p);
      }
    } catch (IOException | UncheckedIOException e) {
      // Best effort, as documented.
    }
  }
}
