package dev.nativemem.internal;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.DirectoryStream;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.FileTime;
import java.nio.file.attribute.PosixFileAttributes;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.zip.ZipEntry;
import java.util.zip.ZipFile;

/**
 * The library extracted once per content into the private base directory and shared by every JVM of
 * this user: {@code lib-<crc32>-<size>.so}, named by the jar entry's CRC and size, so a JVM starts
 * without inflating and writing 2.8 MB. The base directory is this user's alone (0700, no other
 * writer above), so a file there that this user owns, mode 0500, of the right size, was written by
 * nativemem: the name is only ever given to a complete file, by rename.
 *
 * <p>Files not used for {@link #UNUSED_DAYS} days are removed when a new one is extracted. A JVM
 * still mapping a removed file keeps its mapping (Linux frees it with the last user).
 */
public final class SharedLibraryCache {
  static final String PREFIX = "lib-";

  /** Files of {@code dev.nativemem.agent.InstrumentedJdkClasses}, which shares this upkeep. */
  public static final String CLASS_PREFIX = "class-";

  static final String SUFFIX = ".so";
  static final long UNUSED_DAYS = 30;
  private static final Set<PosixFilePermission> READ_EXECUTE =
      PosixFilePermissions.fromString("r-x------");
  private static final long DAY_MILLIS = TimeUnit.DAYS.toMillis(1);

  private SharedLibraryCache() {}

  /** The cached copy of {@code entry}, extracted first if it is missing or not as written. */
  static Path fileFor(Path base, ZipFile jar, ZipEntry entry) throws IOException {
    Path file =
        base.resolve(PREFIX + Long.toHexString(entry.getCrc()) + "-" + entry.getSize() + SUFFIX);
    if (isIntact(file, entry.getSize())) {
      return file;
    }
    try (InputStream in = jar.getInputStream(entry)) {
      extract(in, file, entry.getSize());
    }
    removeUnused(base, file);
    return file;
  }

  /** Ours, a regular file (not a link), mode 0500, of the size the jar says; marked as used. */
  private static boolean isIntact(Path file, long size) {
    try {
      PosixFileAttributes attributes =
          Files.readAttributes(file, PosixFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
      if (!attributes.isRegularFile()
          || attributes.size() != size
          || !attributes.permissions().equals(READ_EXECUTE)
          || !FileOwnership.isOwn(file)) {
        return false;
      }
      markUsed(file, attributes);
      return true;
    } catch (IOException e) {
      return false;
    }
  }

  /** Marks a cached file as used (its mtime, at most once a day) for {@link #removeUnused}. */
  public static void markUsed(Path file, PosixFileAttributes attributes) throws IOException {
    long now = System.currentTimeMillis();
    if (now - attributes.lastModifiedTime().toMillis() > DAY_MILLIS) {
      Files.setLastModifiedTime(file, FileTime.fromMillis(now));
    }
  }

  /**
   * Writes under a name of this process's own, then links or renames: the name only ever shows
   * whole files, and a JVM that raced this one keeps the file it loaded.
   */
  private static void extract(InputStream in, Path file, long size) throws IOException {
    Path partial =
        file.resolveSibling(
            file.getFileName()
                + "."
                + NativeLibraryLoader.currentPid()
                + "-"
                + Long.toHexString(System.nanoTime())
                + ".partial");
    try {
      Files.copy(in, partial);
      Files.setPosixFilePermissions(partial, READ_EXECUTE);
      try {
        Files.createLink(file, partial);
      } catch (FileAlreadyExistsException taken) {
        if (!isIntact(file, size)) {
          Files.move(partial, file, StandardCopyOption.ATOMIC_MOVE); // a damaged file of ours
        }
      } catch (UnsupportedOperationException noHardLinks) {
        Files.move(partial, file, StandardCopyOption.ATOMIC_MOVE);
      }
    } finally {
      Files.deleteIfExists(partial);
    }
  }

  /**
   * Removes this user's cached libraries and instrumented classes (and abandoned partial files)
   * unused for a while.
   */
  private static void removeUnused(Path base, Path keep) {
    long cutoff = System.currentTimeMillis() - UNUSED_DAYS * DAY_MILLIS;
    try (DirectoryStream<Path> entries =
        Files.newDirectoryStream(base, "{" + PREFIX + "," + CLASS_PREFIX + "}*")) {
      for (Path entry : entries) {
        if (!entry.equals(keep) && FileOwnership.isOwnRegularFile(entry)) {
          long used =
              Files.readAttributes(entry, PosixFileAttributes.class, LinkOption.NOFOLLOW_LINKS)
                  .lastModifiedTime()
                  .toMillis();
          if (used < cutoff) {
            Files.deleteIfExists(entry);
          }
        }
      }
    } catch (IOException | RuntimeException e) {
      // Best effort: an old file left behind costs disk space, never correctness.
    }
  }
}
