package dev.nativemem.internal;

import dev.nativemem.base.NativeMemoryException;
import java.io.IOException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.attribute.FileAttribute;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Who owns a path and who else could change it: the checks behind every directory nativemem loads
 * code from or writes into on a host shared with other users (SECURITY.md). Attributes are read
 * without following links ({@code lstat}), so a planted link is seen as a link.
 */
public final class FileOwnership {
  private static final int GROUP_OR_OTHER_WRITE = 0022;
  private static final int STICKY = 01000;
  private static final int ROOT = 0;
  private static final int FILE_TYPE = 0170000;
  private static final int SYMBOLIC_LINK = 0120000;
  private static final int DIRECTORY = 0040000;

  /** As Linux's {@code MAXSYMLINKS}: more links on one path is a loop. */
  private static final int MAX_LINKS = 40;

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
   * Requires that no other user can rename, replace or re-point {@code dir} or any directory above
   * it, and returns its real path, resolved once: the path to use from then on. The path is walked
   * from the root one name at a time without following links ({@code lstat}); each directory on the
   * way must be owned by this process's uid or root and, when group or others may write it, be
   * sticky (as {@code /tmp} is); a symbolic link on the way must be owned by this process's uid or
   * root (another user could re-point his own link between any check and any use) and is then
   * followed by reading it, its target walked by the same rules. Since no other user can change any
   * name of the real path returned, it names the same directory whenever it is used.
   */
  public static Path requireNoOtherWriterAbove(Path dir, String fix) throws IOException {
    return resolve(dir, fix, null);
  }

  /**
   * {@link #requireNoOtherWriterAbove} and {@link #requireOwnDirectory} in one walk, creating
   * missing directories (each with {@code mode}, never through a link) on the way: the real path of
   * a directory of this user's that no one else can write, swap or re-point.
   */
  public static Path ownDirectory(Path dir, Set<PosixFilePermission> mode, String fix)
      throws IOException {
    Path real = resolve(dir, fix, PosixFilePermissions.asFileAttribute(mode));
    requireOwnDirectory(real, fix);
    return real;
  }

  private static Path resolve(Path dir, String fix, FileAttribute<?> create) throws IOException {
    Path absolute = dir.toAbsolutePath();
    Deque<String> pending = new ArrayDeque<>();
    for (Path name : absolute) {
      pending.addLast(name.toString());
    }
    Path current = absolute.getRoot();
    requireNotSwappable(current, stat(current), dir, fix);
    int links = 0;
    while (!pending.isEmpty()) {
      String name = pending.removeFirst();
      if (name.isEmpty() || name.equals(".")) {
        continue;
      }
      if (name.equals("..")) {
        // current is a real path whose every directory was checked: its parent is one of them.
        current = current.getParent() == null ? current : current.getParent();
        continue;
      }
      Path next = current.resolve(name);
      Map<String, Object> attributes = statOrCreate(next, create);
      int type = (Integer) attributes.get("mode") & FILE_TYPE;
      if (type == SYMBOLIC_LINK) {
        int owner = (Integer) attributes.get("uid");
        if (owner != ROOT && owner != processUid()) {
          throw refused(
              next
                  + " is a symbolic link of uid "
                  + owner
                  + ", who could re-point it to a directory of theirs between any check of "
                  + dir
                  + " and its use",
              fix);
        }
        if (++links > MAX_LINKS) {
          throw refused(dir + " goes through more than " + MAX_LINKS + " symbolic links", fix);
        }
        Path target = Files.readSymbolicLink(next);
        List<String> names = new ArrayList<>();
        for (Path part : target) {
          names.add(part.toString());
        }
        for (int i = names.size() - 1; i >= 0; i--) {
          pending.addFirst(names.get(i));
        }
        if (target.isAbsolute()) {
          current = target.getRoot();
        }
        continue;
      }
      if (type != DIRECTORY) {
        throw refused(next + " is not a directory", fix);
      }
      requireNotSwappable(next, attributes, dir, fix);
      current = next;
    }
    return current;
  }

  /** lstat of {@code path}; a missing directory is created first when {@code create} is given. */
  private static Map<String, Object> statOrCreate(Path path, FileAttribute<?> create)
      throws IOException {
    if (create != null && !Files.exists(path, LinkOption.NOFOLLOW_LINKS)) {
      try {
        Files.createDirectory(path, create); // mkdir: never follows a link at the last name
      } catch (FileAlreadyExistsException raced) {
        // made meanwhile, by anyone: checked below like any existing entry
      }
    }
    return stat(path);
  }

  private static void requireNotSwappable(
      Path p, Map<String, Object> attributes, Path dir, String fix) {
    int owner = (Integer) attributes.get("uid");
    int mode = (Integer) attributes.get("mode");
    if (owner != ROOT && owner != processUid()) {
      throw refused(
          p + " belongs to uid " + owner + ", who could swap " + dir + " for a directory of theirs",
          fix);
    }
    if ((mode & GROUP_OR_OTHER_WRITE) != 0 && (mode & STICKY) == 0) {
      throw refused(
          p
              + " is writable by other users and not sticky (mode "
              + Integer.toOctalString(mode & 07777)
              + "), so anyone could replace what nativemem writes in "
              + dir,
          fix);
    }
  }

  private static NativeMemoryException refused(String problem, String fix) {
    return new NativeMemoryException(problem + ": " + fix);
  }
}
