package dev.nativemem.internal;

import dev.nativemem.base.Setting;
import java.io.IOException;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Set;

/**
 * The private base directory the library is extracted into ({@code -Dnativemem.tmpdir}, default
 * {@code java.io.tmpdir/nativemem-<user>}, mode 0700, owned by this process's user, with no other
 * user able to write it or any directory above it unless sticky), checked once.
 */
final class PrivateBase {
  static final Set<PosixFilePermission> OWNER_ONLY = PosixFilePermissions.fromString("rwx------");

  private static Path privateBase;

  private PrivateBase() {}

  /** The checked directory, resolved at the first call. */
  static synchronized Path get() throws IOException {
    if (privateBase == null) {
      privateBase = privateBaseDirectory();
    }
    return privateBase;
  }

  /**
   * The user's name, or {@code uid<N>} for a uid the user database does not name (a container's
   * user: the JDK then says "?" for every such uid, whose directories would collide).
   */
  static String userForDirectoryName() {
    String name = System.getProperty("user.name", "?");
    return name.isEmpty() || name.equals("?") || name.contains("/")
        ? "uid" + FileOwnership.processUid()
        : name;
  }

  private static Path privateBaseDirectory() throws IOException {
    String configured = Setting.TMPDIR.value();
    Path base =
        configured != null
            ? Paths.get(configured)
            : Paths.get(
                System.getProperty("java.io.tmpdir"), "nativemem-" + userForDirectoryName());
    String fix =
        "remove it, or set -D" + Setting.TMPDIR.property() + " to a directory only you can write";
    // Resolved once, here: the real path returned is the one checked, and no other user can
    // re-point any name on it, so the library later loaded by this name is the one written.
    return FileOwnership.ownDirectory(base, OWNER_ONLY, fix);
  }
}
