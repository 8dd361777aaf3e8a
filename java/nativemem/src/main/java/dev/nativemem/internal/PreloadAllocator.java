package dev.nativemem.internal;

import dev.nativemem.NativeMemoryException;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Arrays;
import java.util.Set;

/**
 * {@code libnativemem_jemalloc.so}, the allocator the jar carries for {@code LD_PRELOAD}: jemalloc
 * with profiling ready but inactive, arenas sized for the container's CPUs, and decay by background
 * threads. It is never loaded into this JVM; it is extracted for the next start.
 */
public final class PreloadAllocator {
  public static final String FILE = "libnativemem_jemalloc.so";

  private PreloadAllocator() {}

  /** {@code ~/.nativemem}: where {@code env} and the demo extract the allocator by default. */
  public static Path defaultDirectory() {
    return java.nio.file.Paths.get(System.getProperty("user.home"), ".nativemem");
  }

  /** jemalloc's arena count for {@code cpus} CPUs, as the allocator computes it. */
  public static int narenas(int cpus) {
    return cpus > 1 ? 4 * cpus : 1;
  }

  /**
   * Writes the allocator to {@code dir/libnativemem_jemalloc.so} (created if missing) and returns
   * that path. An identical file is kept; a different one is replaced by rename, so running
   * processes keep the copy they mapped.
   *
   * @throws NativeMemoryException if the directory is unusable or writing fails
   */
  public static Path extractTo(Path dir) {
    String platform =
        NativeLibraryLoader.platform(System.getProperty("os.name"), System.getProperty("os.arch"));
    String resource = "/dev/nativemem/native/" + platform + "/" + FILE;
    byte[] library;
    try (InputStream in = PreloadAllocator.class.getResourceAsStream(resource)) {
      if (in == null) {
        throw new NativeMemoryException(
            "this nativemem jar carries no preload allocator for "
                + platform
                + " ("
                + resource
                + " is missing); build the jar on "
                + platform);
      }
      library = in.readAllBytes();
    } catch (IOException e) {
      throw new NativeMemoryException("cannot read " + resource + ": " + e.getMessage(), e);
    }
    try {
      Files.createDirectories(dir);
      Path absolute = dir.toRealPath();
      Set<PosixFilePermission> perms =
          Files.getPosixFilePermissions(absolute, LinkOption.NOFOLLOW_LINKS);
      if (perms.contains(PosixFilePermission.OTHERS_WRITE)
          || perms.contains(PosixFilePermission.GROUP_WRITE)) {
        throw new NativeMemoryException(
            absolute
                + " is writable by other users ("
                + PosixFilePermissions.toString(perms)
                + "); a preloaded library there could be replaced: choose another --dir");
      }
      Path target = absolute.resolve(FILE);
      if (Files.isRegularFile(target) && Arrays.equals(Files.readAllBytes(target), library)) {
        return target;
      }
      Path partial = Files.createTempFile(absolute, "." + FILE, ".partial");
      try {
        Files.write(partial, library);
        Files.setPosixFilePermissions(partial, PosixFilePermissions.fromString("rwxr-xr-x"));
        try {
          Files.move(
              partial, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        } catch (AtomicMoveNotSupportedException e) {
          Files.move(partial, target, StandardCopyOption.REPLACE_EXISTING);
        }
      } finally {
        Files.deleteIfExists(partial);
      }
      return target;
    } catch (IOException e) {
      throw new NativeMemoryException(
          "cannot write the preload allocator into " + dir + ": " + e + "; choose another --dir",
          e);
    }
  }
}
