package dev.nativemem.internal;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;

/**
 * "Write to a temporary name, then move" in plain Java, for the files made before or without the
 * native library (the extracted library, the preload allocator, the agent's cached classes): the
 * content goes to {@code <name>.<pid>-<unique>.partial} beside the target, gets its mode, and is
 * moved onto the target in one rename, so a reader sees no file or a whole one. Files for the user
 * (dumps, reports, pages) go through the native file layer instead ({@link NewFiles}).
 */
public final class PartialFile {
  /** The suffix of a file still being written; cleaners may remove old ones. */
  public static final String SUFFIX = ".partial";

  private final Path partial;

  private PartialFile(Path partial) {
    this.partial = partial;
  }

  /** What goes into the file. */
  @FunctionalInterface
  public interface Content {
    void writeTo(Path partial) throws IOException;
  }

  /** The content of {@code bytes}. */
  public static Content of(byte[] bytes) {
    return partial -> Files.write(partial, bytes);
  }

  /** The content read from {@code in}. */
  public static Content of(InputStream in) {
    return partial -> Files.copy(in, partial);
  }

  /**
   * Writes {@code content} under a new name of this process's beside {@code target}, with mode
   * {@code mode} ({@code "r-x------"}); not yet moved. Removed again when writing fails.
   */
  public static PartialFile write(Path target, Content content, String mode) throws IOException {
    Path partial =
        target.resolveSibling(
            target.getFileName()
                + "."
                + PrivateCopies.currentPid()
                + "-"
                + Long.toHexString(System.nanoTime())
                + SUFFIX);
    PartialFile file = new PartialFile(partial);
    try {
      content.writeTo(partial);
      Files.setPosixFilePermissions(partial, PosixFilePermissions.fromString(mode));
    } catch (IOException | RuntimeException e) {
      file.discard();
      throw e;
    }
    return file;
  }

  /**
   * {@link #write}, then {@link #moveTo} {@code target}, replacing a file there; the partial file
   * never outlives the call.
   */
  public static void writeThenMove(Path target, Content content, String mode) throws IOException {
    PartialFile file = write(target, content, mode);
    try {
      file.moveTo(target);
    } finally {
      file.discard();
    }
  }

  /** The file being written, for a caller that links it into place itself. */
  public Path path() {
    return partial;
  }

  /**
   * Renames the written file onto {@code target} (replacing a file there): atomically, or, on a
   * file system without atomic renames, with a plain move.
   */
  public void moveTo(Path target) throws IOException {
    try {
      Files.move(partial, target, StandardCopyOption.ATOMIC_MOVE);
    } catch (AtomicMoveNotSupportedException e) {
      Files.move(partial, target, StandardCopyOption.REPLACE_EXISTING);
    }
  }

  /** Removes the written file if it is still under its temporary name; never throws. */
  public void discard() {
    try {
      Files.deleteIfExists(partial);
    } catch (IOException | RuntimeException e) {
      // Gone already, or left for the cache's cleaner, which removes old partial files.
    }
  }
}
