package dev.nativemem.tests;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import java.util.stream.Stream;

/**
 * What a JVM of another uid (the pod's 9999, nobody) needs to read: the jar, the test classes, a
 * {@code jlink}ed runtime. A checkout inside a private directory (a clone under {@code /root})
 * keeps them from that uid, so such a path is copied once into a directory of this run's that every
 * user may read, and the copy is used instead; a path others can already reach is used as it is.
 */
final class OtherUsers {
  private static final Map<Path, Path> COPIES = new HashMap<>();
  private static Path staging;

  private OtherUsers() {}

  /** {@code path}, or a copy of it (a directory whole, modes kept) that every user can read. */
  static synchronized Path readable(Path path) {
    try {
      if (!Files.exists(path) || reachable(path.toRealPath())) {
        return path;
      }
      Path real = path.toRealPath();
      return copyOnce(real);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot make " + path + " readable for another uid", e);
    }
  }

  /**
   * {@link #readable}, and a copy also when {@code path} is under {@code /tmp}: for a JVM that gets
   * a private {@code /tmp} (a tmpfs mounted over it), which hides this one's.
   */
  static synchronized Path outsideTmp(Path path) {
    try {
      Path real = path.toRealPath();
      if (!real.startsWith("/tmp")) {
        return readable(path);
      }
      return copyOnce(real);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot copy " + path + " out of /tmp", e);
    }
  }

  /** Whether every directory above {@code real} lets others in and {@code real} lets them read. */
  private static boolean reachable(Path real) throws IOException {
    for (Path dir = real.getParent(); dir != null; dir = dir.getParent()) {
      if (!Files.getPosixFilePermissions(dir).contains(PosixFilePermission.OTHERS_EXECUTE)) {
        return false;
      }
    }
    Set<PosixFilePermission> own = Files.getPosixFilePermissions(real);
    return own.contains(PosixFilePermission.OTHERS_READ)
        && (!Files.isDirectory(real) || own.contains(PosixFilePermission.OTHERS_EXECUTE));
  }

  /**
   * A new empty directory that every user can reach (a mount point for a pod's volume, say), in the
   * same place as the copies; removed with them at exit if empty by then.
   */
  static synchronized Path newDirectory(String name) throws IOException {
    return Files.createDirectory(stagingDirectory().resolve(name));
  }

  /**
   * This run's directory, in {@code /var/tmp} where it is the usual sticky directory: tests that
   * give a JVM a private {@code /tmp} (a tmpfs mounted over it) must still find the copies.
   */
  /** This run's one copy of {@code real}, made at the first call. */
  private static Path copyOnce(Path real) throws IOException {
    Path copy = COPIES.get(real);
    if (copy == null) {
      copy = stagingDirectory().resolve(COPIES.size() + "-" + real.getFileName());
      copyTree(real, copy);
      COPIES.put(real, copy);
    }
    return copy;
  }

  private static Path stagingDirectory() throws IOException {
    if (staging == null) {
      Path varTmp = Path.of("/var/tmp");
      Path dir =
          Files.isDirectory(varTmp)
                  && Files.getPosixFilePermissions(varTmp)
                      .containsAll(
                          Set.of(
                              PosixFilePermission.OTHERS_WRITE, PosixFilePermission.OTHERS_EXECUTE))
              ? Files.createTempDirectory(varTmp, "nativemem-tests-other-users-")
              : Files.createTempDirectory("nativemem-tests-other-users-");
      Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwxr-xr-x"));
      Runtime.getRuntime().addShutdownHook(new Thread(() -> deleteTree(dir)));
      staging = dir;
    }
    return staging;
  }

  private static void copyTree(Path from, Path to) throws IOException {
    try (Stream<Path> all = Files.walk(from)) {
      for (Path p : (Iterable<Path>) all::iterator) {
        Path target = to.resolve(from.relativize(p).toString());
        Files.copy(p, target, StandardCopyOption.COPY_ATTRIBUTES, LinkOption.NOFOLLOW_LINKS);
        if (!Files.isSymbolicLink(target)) {
          Set<PosixFilePermission> modes = Files.getPosixFilePermissions(target);
          modes.add(PosixFilePermission.OTHERS_READ);
          if (Files.isDirectory(target) || modes.contains(PosixFilePermission.OWNER_EXECUTE)) {
            modes.add(PosixFilePermission.OTHERS_EXECUTE);
          }
          Files.setPosixFilePermissions(target, modes);
        }
      }
    }
  }

  static void deleteTree(Path dir) {
    try (Stream<Path> all = Files.walk(dir)) {
      all.sorted((a, b) -> b.getNameCount() - a.getNameCount())
          .forEach(
              p -> {
                try {
                  Files.deleteIfExists(p);
                } catch (IOException e) {
                  // left in the temporary directory
                }
              });
    } catch (IOException e) {
      // left in the temporary directory
    }
  }
}
