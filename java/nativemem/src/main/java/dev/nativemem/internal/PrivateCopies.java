package dev.nativemem.internal;

import java.io.IOException;
import java.io.InputStream;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.OpenOption;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.HashSet;
import java.util.Set;

/**
 * The per-process copies of the library, for a class loader that finds the shared copy taken by
 * another one of its JVM, or a jar that is not a file: each in its own {@code pid<N>-<unique>}
 * directory of the private base, kept while the process lives (profiles can still symbolize it),
 * removed by a later JVM once its lock is free.
 */
final class PrivateCopies {
  private static final String PROCESS_DIR_PREFIX = "pid";
  private static final String LOCK_FILE = "lock";

  /** Held (never read) while this class loader lives: tells other JVMs the directory is in use. */
  @SuppressWarnings("unused")
  private static FileChannel lock;

  private PrivateCopies() {}

  /**
   * Writes the library into a fresh per-process directory and returns its file. The directory holds
   * a {@code lock} file this JVM keeps locked while it lives: other JVMs sharing the base directory
   * tell a live one from a dead one by the lock, which works across PID namespaces (containers
   * sharing a volume), where a process id means nothing.
   */
  static Path write(InputStream library) throws IOException {
    Path base = PrivateBase.get();
    removeDirectoriesOfDeadProcesses(base);
    Path dir = createProcessDirectory(base);
    holdLock(dir);
    // A fresh 0700 directory of ours: fixed names inside it cannot clash or be planted.
    Path target = dir.resolve(NativeLibraryLoader.LIBRARY_FILE);
    PartialFile.writeThenMove(target, PartialFile.of(library), "r-x------");
    return target;
  }

  /**
   * Creates {@code base/pid<N>-<unique>}, mode 0700. Not {@code Files.createTempDirectory}: its
   * {@code SecureRandom} costs a JVM start about 40 ms of CPU, and the base directory is private,
   * so the name needs to be unique, not unguessable; an existing name is skipped.
   */
  private static Path createProcessDirectory(Path base) throws IOException {
    String prefix = PROCESS_DIR_PREFIX + currentPid() + "-";
    long unique = System.nanoTime();
    for (int attempt = 0; ; attempt++) {
      Path dir = base.resolve(prefix + Long.toHexString(unique + attempt));
      try {
        return Files.createDirectory(
            dir, PosixFilePermissions.asFileAttribute(PrivateBase.OWNER_ONLY));
      } catch (java.nio.file.FileAlreadyExistsException taken) {
        if (attempt == 100) {
          throw taken;
        }
      }
    }
  }

  /**
   * This process's id as its PID namespace sees it. Read from {@code /proc/self}: {@code
   * ProcessHandle} would set up its process reaper's thread pool on the way, at every start.
   */
  static String currentPid() {
    try {
      return Files.readSymbolicLink(Paths.get("/proc/self")).toString();
    } catch (IOException | UnsupportedOperationException e) {
      return Long.toString(ProcessHandle.current().pid());
    }
  }

  /**
   * Creates {@code dir/lock} and locks it for the life of this class loader. The file is locked
   * under a temporary name and then renamed, so no other JVM ever sees it unlocked.
   */
  private static void holdLock(Path dir) throws IOException {
    FileChannel[] channel = new FileChannel[1];
    PartialFile.writeThenMove(
        dir.resolve(LOCK_FILE),
        fresh -> {
          channel[0] =
              FileChannel.open(
                  fresh,
                  Set.<OpenOption>of(
                      StandardOpenOption.CREATE_NEW,
                      StandardOpenOption.WRITE,
                      LinkOption.NOFOLLOW_LINKS),
                  PosixFilePermissions.asFileAttribute(
                      PosixFilePermissions.fromString("rw-------")));
          channel[0].lock();
        },
        "rw-------");
    lock = channel[0];
  }

  /**
   * Each extraction directory is named {@code pid<N>-<random>} and holds a {@code lock} its JVM
   * keeps locked; drop those whose lock is free (their JVM is gone). A directory without a lock is
   * left alone: it is being created, or an older nativemem made it and its owner cannot be told.
   */
  private static void removeDirectoriesOfDeadProcesses(Path base) {
    Set<Path> heldHere = filesOpenInThisProcess();
    try (DirectoryStream<Path> entries =
        Files.newDirectoryStream(base, PROCESS_DIR_PREFIX + "*-*")) {
      for (Path entry : entries) {
        Path lockFile = entry.resolve(LOCK_FILE);
        // Closing any channel on a file drops every lock this process holds on it (POSIX), so a
        // lock held by another class loader of this JVM is recognised by its open descriptor.
        if (heldHere.contains(lockFile) || !FileOwnership.isOwnRegularFile(lockFile)) {
          continue;
        }
        try (FileChannel channel =
                FileChannel.open(lockFile, StandardOpenOption.WRITE, LinkOption.NOFOLLOW_LINKS);
            FileLock free = channel.tryLock()) {
          if (free != null) {
            FileTrees.deleteQuietly(entry);
          }
        } catch (IOException | OverlappingFileLockException e) {
          // Held, or gone meanwhile: either way not ours to remove.
        }
      }
    } catch (IOException | RuntimeException e) {
      // Cleanup is best effort; a failure must never stop the library from loading.
    }
  }

  /** The files this process has open, by the targets of {@code /proc/self/fd}. */
  private static Set<Path> filesOpenInThisProcess() {
    Set<Path> open = new HashSet<>();
    try (DirectoryStream<Path> fds = Files.newDirectoryStream(Paths.get("/proc/self/fd"))) {
      for (Path fd : fds) {
        try {
          open.add(Files.readSymbolicLink(fd));
        } catch (IOException closedMeanwhile) {
          // The descriptor of the listing itself, or one closed since.
        }
      }
    } catch (IOException e) {
      // Without /proc nothing is known to be held here; tryLock still protects other JVMs.
    }
    return open;
  }
}
