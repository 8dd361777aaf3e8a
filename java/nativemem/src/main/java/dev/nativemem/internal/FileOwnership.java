package dev.nativemem.internal;

import dev.nativemem.NativeMemoryException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.Map;

/**
 * Who owns a path and who else could change it: the checks behind every directory nativemem loads
 * code from or writes into on a host shared with other users (SECURITY.md). Attributes are read
 * without following links ({@code lstat}), so a planted link is seen as a link.
 */
public final class FileOwnership {
  private static final int GROUP_OR_OTHER_WRITE = 0022;
  private static final int STICKY = 01000;
  private static final int ROOT = 0;

  private FileOwnership() {}

  /** Read once: a JVM never changes its uid. */
  private static volatile int processUid = -1;

  /** The effective uid of this process: the owner the kernel gives {@code /proc/self}. */
  public static int processUid() {
    int uid = processUid;
    if (uid < 0) {
      try {
        uid = (Integer) Files.getAttribute(Paths.get("/proc/self"), "unix:uid");
      } catch (IOException | UnsupportedOperationException e) {
        throw new NativeMemoryException("cannot tell this process's uid from /proc/self: " + e, e);
      }
      processUid = uid;
    }
    return uid;
  }

  /**
   * {@code unix:mode}, {@code uid}, {@code ino}, {@code dev} of {@code path} itself (a link is not
   * followed).
   */
  public static Map<String, Object> stat(Path path) throws IOException {
    return Files.readAttributes(path, "unix:mode,uid,ino,dev", LinkOption.NOFOLLOW_LINKS);
  }

  /** Whether {@code path} itself (a link is not followed) belongs to this process's uid. */
  public static boolean isOwn(Path path) {
    try {
      return (Integer) stat(path).get("uid") == processUid();
    } catch (IOException e) {
      return false;
    }
  }

  /** Whether {@code path} is a regular file (not a link) owned by this process's uid. */
  public static boolean isOwnRegularFile(Path path) {
    return Files.isRegularFile(path, LinkOption.NOFOLLOW_LINKS) && isOwn(path);
  }

  /**
   * Requires {@code dir} to be a directory (not a link) that this process's uid owns and that no
   * group or other user can write.
   *
   * @param fix what the user should do instead, appended to the message
   * @throws NativeMemoryException naming the directory, the problem and the fix
   */
  public static void requireOwnDirectory(Path dir, String fix) throws IOException {
    if (!Files.isDirectory(dir, LinkOption.NOFOLLOW_LINKS)) {
      throw refused(dir + " is not a directory (or is a symbolic link)", fix);
    }
    Map<String, Object> attributes = stat(dir);
    int owner = (Integer) attributes.get("uid");
    int mode = (Integer) attributes.get("mode");
    if (owner != processUid()) {
      throw refused(
          dir
              + " belongs to uid "
              + owner
              + ", not to this process (uid "
              + processUid()
              + "), so its owner could replace what nativemem puts there",
          fix);
    }
    if ((mode & GROUP_OR_OTHER_WRITE) != 0) {
      throw refused(
          dir
              + " is writable by other users (mode "
              + Integer.toOctalString(mode & 07777)
              + "), so they could replace what nativemem puts there",
          fix);
    }
  }

  /**
   * Requires that no other user can rename or replace {@code dir} or any directory above it: each
   * is owned by this process's uid or root and, when group or others may write it, sticky (as
   * {@code /tmp} is). Symbolic links on the way are resolved first.
   */
  public static void requireNoOtherWriterAbove(Path dir, String fix) throws IOException {
    Path real = dir.toRealPath();
    for (Path p = real; p != null; p = p.getParent()) {
      Map<String, Object> attributes = stat(p);
      int owner = (Integer) attributes.get("uid");
      int mode = (Integer) attributes.get("mode");
      if (owner != ROOT && owner != processUid()) {
        throw refused(
            p
                + " belongs to uid "
                + owner
                + ", who could swap "
                + real
                + " for a directory of theirs",
            fix);
      }
      if ((mode & GROUP_OR_OTHER_WRITE) != 0 && (mode & STICKY) == 0) {
        throw refused(
            p
                + " is writable by other users and not sticky (mode "
                + Integer.toOctalString(mode & 07777)
                + "), so anyone could replace what nativemem writes in "
                + real,
            fix);
      }
    }
  }

  private static NativeMemoryException refused(String problem, String fix) {
    return new NativeMemoryException(problem + ": " + fix);
  }
}
