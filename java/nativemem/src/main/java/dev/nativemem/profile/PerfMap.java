package dev.nativemem.profile;

import dev.nativemem.internal.DiagnosticCommands;
import dev.nativemem.internal.FileOwnership;
import dev.nativemem.internal.FileTrees;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.OpenOption;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Map;
import java.util.Set;

/**
 * The JVM's perf map ({@code Compiler.perfmap}): address ranges of JIT-compiled methods, so native
 * stacks that enter Java code can be named. JDK 17+; JDK 11 has no such command.
 */
final class PerfMap {
  private static final String OPERATION = "Compiler.perfmap";
  private static final int STICKY = 01000;

  /** The most a perf map may hold (one line per compiled method: tens of MiB at most). */
  private static final long MAX_BYTES = 512L << 20;

  private PerfMap() {}

  /**
   * Writes the perf map into a new private (0700) temp directory, which the caller deletes.
   *
   * <p>JDK 21 and later write it to a file we name. JDK 17 writes only {@code /tmp/perf-<pid>.map},
   * a fixed name in a directory every user can write, following a link planted there: so we create
   * that file first ourselves (mode 0600, failing if anything is there), which only works in a
   * sticky root-owned {@code /tmp}, let the JVM fill it, copy it (bounded, never through a link,
   * only the inode we created), and delete it at once.
   *
   * @return the file, or {@code null} when this JVM cannot write one safely (JDK 11; a JDK 17 whose
   *     {@code /tmp/perf-<pid>.map} someone else created, or whose {@code /tmp} is not sticky)
   */
  public static Path writeTemp() {
    Path dir;
    try {
      dir =
          Files.createTempDirectory(
              "nativemem-perf",
              PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
    } catch (IOException e) {
      return null;
    }
    Path temp = dir.resolve("perf.map");
    try {
      // JDK 21+ takes the file name.
      DiagnosticCommands.run(OPERATION, temp.toString());
      if (Files.size(temp) > 0) {
        return temp;
      }
    } catch (IOException | RuntimeException e) {
      // JDK 17 takes no argument and always writes /tmp/perf-<pid>.map; JDK 11 has no command.
    }
    try {
      if (copyFixedName(temp)) {
        return temp;
      }
    } catch (IOException | RuntimeException e) {
      // No perf map: JIT frames stay unnamed, the dump goes on.
    }
    FileTrees.deleteQuietly(dir);
    return null;
  }

  private static boolean copyFixedName(Path temp) throws IOException {
    Path tmp = Paths.get("/tmp");
    Map<String, Object> tmpAttributes = FileOwnership.stat(tmp);
    if ((Integer) tmpAttributes.get("uid") != 0
        || ((Integer) tmpAttributes.get("mode") & STICKY) == 0) {
      return false; // a file we create there could be swapped by another user
    }
    Path fixed = tmp.resolve("perf-" + ProcessHandle.current().pid() + ".map");
    if (FileOwnership.isOwnRegularFile(fixed)) {
      Files.delete(fixed); // left by an earlier dump of this process that was interrupted
    }
    Object ours;
    try (FileChannel created =
        FileChannel.open(
            fixed,
            Set.<OpenOption>of(
                StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE, LinkOption.NOFOLLOW_LINKS),
            PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")))) {
      ours = FileOwnership.stat(fixed).get("ino");
    } catch (FileAlreadyExistsException planted) {
      return false; // someone else's file or link: never written, read or deleted
    }
    try {
      DiagnosticCommands.run(OPERATION);
      try (FileChannel in =
              FileChannel.open(fixed, StandardOpenOption.READ, LinkOption.NOFOLLOW_LINKS);
          FileChannel out =
              FileChannel.open(
                  temp,
                  Set.<OpenOption>of(StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE),
                  PosixFilePermissions.asFileAttribute(
                      PosixFilePermissions.fromString("rw-------")))) {
        long size = in.size();
        if (!ours.equals(FileOwnership.stat(fixed).get("ino")) || size > MAX_BYTES) {
          return false;
        }
        for (long done = 0; done < size; ) {
          long n = in.transferTo(done, size - done, out);
          if (n <= 0) {
            break;
          }
          done += n;
        }
      }
      return true;
    } finally {
      // Only the file we created: a sticky /tmp keeps others from replacing it meanwhile.
      if (FileOwnership.isOwnRegularFile(fixed)
          && ours.equals(FileOwnership.stat(fixed).get("ino"))) {
        Files.delete(fixed);
      }
    }
  }
}
