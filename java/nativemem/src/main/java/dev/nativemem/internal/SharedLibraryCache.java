package dev.nativemem.internal;

import java.io.IOException;
import java.io.InputStream;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.file.DirectoryStream;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.OpenOption;
import java.nio.file.Path;
import java.nio.file.SecureDirectoryStream;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.FileTime;
import java.nio.file.attribute.PosixFileAttributeView;
import java.nio.file.attribute.PosixFileAttributes;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.nio.file.attribute.UserPrincipal;
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
 * <p>A JVM that uses a copy holds, for its whole life, a shared lock on one byte of {@link
 * #IN_USE}, at a position given by the copy's name, taken before the copy is checked or written.
 * Copies not marked used for {@link #UNUSED_DAYS} days are removed when a new one is extracted, and
 * only if an exclusive lock on their byte is free at that moment (taken without waiting, held while
 * the file is deleted): a JVM that has run for months keeps its file. The lock file is never
 * deleted, so every JVM locks the same file.
 */
public final class SharedLibraryCache {
  static final String PREFIX = "lib-";

  /** Files of {@code dev.nativemem.agent.InstrumentedJdkClasses}, which shares this upkeep. */
  public static final String CLASS_PREFIX = "class-";

  static final String SUFFIX = ".so";

  /** Beside the copies: the JVMs' byte-range locks on the copies they use. */
  static final String IN_USE = "in-use.lock";

  static final long UNUSED_DAYS = 30;
  private static final Set<PosixFilePermission> READ_EXECUTE =
      PosixFilePermissions.fromString("r-x------");
  private static final long DAY_MILLIS = TimeUnit.DAYS.toMillis(1);

  /**
   * This class loader's channel on {@link #IN_USE}, open for its life: closing any descriptor of a
   * file drops every POSIX lock the process holds on it, so this one channel takes every lock.
   */
  private static FileChannel inUse;

  private SharedLibraryCache() {}

  /**
   * The cached copy of {@code entry}, extracted first if it is missing or not as written; marked in
   * use by this JVM (a lock held until it exits) before it is checked.
   */
  static synchronized Path fileFor(Path base, ZipFile jar, ZipEntry entry) throws IOException {
    String name = PREFIX + Long.toHexString(entry.getCrc()) + "-" + entry.getSize() + SUFFIX;
    Path file = base.resolve(name);
    holdInUse(base, name);
    if (isIntact(file, entry.getSize())) {
      return file;
    }
    try (InputStream in = jar.getInputStream(entry)) {
      extract(in, file, entry.getSize());
    }
    removeUnused(base, file);
    return file;
  }

  /**
   * Takes a shared lock on {@code name}'s byte of {@link #IN_USE}, kept until the JVM exits. Waits
   * only while another JVM deletes that very file (two unlinks). Best effort: a lock that cannot be
   * taken (a file system without locks) leaves the copy to the 30-day rule alone.
   */
  private static void holdInUse(Path base, String name) {
    try {
      FileChannel channel = inUseChannel(base);
      try {
        channel.lock(position(name), 1, true);
      } catch (OverlappingFileLockException heldInThisJvm) {
        // another class loader of this JVM uses the same copy and holds its byte already
      }
    } catch (IOException | RuntimeException e) {
      // no lock: the copy is kept by its mark of use alone, as before locks existed
    }
  }

  private static FileChannel inUseChannel(Path base) throws IOException {
    if (inUse == null) {
      inUse =
          FileChannel.open(
              base.resolve(IN_USE),
              Set.<OpenOption>of(
                  StandardOpenOption.CREATE,
                  StandardOpenOption.READ,
                  StandardOpenOption.WRITE,
                  LinkOption.NOFOLLOW_LINKS),
              PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
    }
    return inUse;
  }

  /** A copy's byte in {@link #IN_USE}: two names that meet on one byte are only kept longer. */
  static long position(String name) {
    return Integer.toUnsignedLong(name.hashCode());
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
    PartialFile partial =
        PartialFile.write(file, PartialFile.of(in), PosixFilePermissions.toString(READ_EXECUTE));
    try {
      try {
        Files.createLink(file, partial.path());
      } catch (FileAlreadyExistsException taken) {
        if (!isIntact(file, size)) {
          partial.moveTo(file); // a damaged file of ours
        }
      } catch (UnsupportedOperationException noHardLinks) {
        partial.moveTo(file);
      }
    } finally {
      partial.discard();
    }
  }

  /**
   * Removes this user's cached libraries and instrumented classes (and abandoned partial files)
   * unused for a while, a library only if no JVM holds its byte of {@link #IN_USE}. Every step is
   * relative to the base directory's open descriptor, links never followed.
   */
  private static void removeUnused(Path base, Path keep) {
    long cutoff = System.currentTimeMillis() - UNUSED_DAYS * DAY_MILLIS;
    try (DirectoryStream<Path> listing = Files.newDirectoryStream(base)) {
      if (!(listing instanceof SecureDirectoryStream)) {
        return; // no descriptor-relative operations here: an old file costs disk space only
      }
      SecureDirectoryStream<Path> dir = (SecureDirectoryStream<Path>) listing;
      UserPrincipal me =
          dir.getFileAttributeView(PosixFileAttributeView.class).readAttributes().owner();
      for (Path entry : dir) {
        Path name = entry.getFileName();
        String text = name.toString();
        if (name.equals(keep.getFileName())
            || !(text.startsWith(PREFIX) || text.startsWith(CLASS_PREFIX))) {
          continue;
        }
        PosixFileAttributes attributes =
            dir.getFileAttributeView(name, PosixFileAttributeView.class, LinkOption.NOFOLLOW_LINKS)
                .readAttributes();
        if (!attributes.isRegularFile()
            || !attributes.owner().equals(me)
            || attributes.lastModifiedTime().toMillis() >= cutoff) {
          continue;
        }
        if (text.startsWith(CLASS_PREFIX)) {
          dir.deleteFile(name); // read at start only, never mapped
        } else {
          deleteUnlessInUse(dir, base, name);
        }
      }
    } catch (IOException | RuntimeException e) {
      // Best effort: an old file left behind costs disk space, never correctness.
    }
  }

  private static void deleteUnlessInUse(SecureDirectoryStream<Path> dir, Path base, Path name)
      throws IOException {
    FileLock unused;
    try {
      unused = inUseChannel(base).tryLock(position(name.toString()), 1, false);
    } catch (OverlappingFileLockException usedInThisJvm) {
      return;
    }
    if (unused == null) {
      return; // a running JVM maps it
    }
    try {
      dir.deleteFile(name);
    } finally {
      unused.release();
    }
  }
}
