package dev.nativemem.internal;

import dev.nativemem.base.NativeMemoryException;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Arrays;

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

  /** The most CPUs {@link #narenas} sizes for: jemalloc allows at most 4094 arenas. */
  public static final int MAX_CPUS = 1023;

  private static final int MAX_ARENAS = 4094;

  /** jemalloc's arena count for {@code cpus} CPUs, as the allocator computes it. */
  public static int narenas(int cpus) {
    return cpus > 1 ? (int) Math.min(4L * cpus, MAX_ARENAS) : 1;
  }

  /**
   * Writes the allocator to {@code dir/libnativemem_jemalloc.so} (created if missing) and returns
   * that path. The directory, and every one above it, must be safe from other users: whoever can
   * replace the file runs code in every JVM started with it preloaded. An identical file is kept; a
   * different one is replaced by rename, so running processes keep the copy they mapped.
   *
   * @param fix what the user should do if {@code dir} cannot be used (the caller knows its options)
   * @throws NativeMemoryException if the directory is unsafe, mounted {@code noexec}, or writing
   *     fails, saying why and then {@code fix}
   */
  public static Path extractTo(Path dir, String fix) {
    byte[] library = bytes();
    try {
      // Other users' services run the file: the directory is theirs to read, not to write.
      Path real =
          FileOwnership.ownDirectory(dir, PosixFilePermissions.fromString("rwxr-xr-x"), fix);
      String noexec = noexecMount(real);
      if (noexec != null) {
        throw new NativeMemoryException(
            real
                + " is on a file system mounted noexec ("
                + noexec
                + "); the dynamic linker would ignore LD_PRELOAD="
                + real.resolve(FILE)
                + ": "
                + fix);
      }
      Path target = real.resolve(FILE);
      if (isSameOwnFile(target, library)) {
        return target;
      }
      PartialFile.writeThenMove(target, PartialFile.of(library), "rwxr-xr-x");
      return target;
    } catch (IOException e) {
      throw new NativeMemoryException(
          "cannot write the preload allocator into " + dir + " (" + e + "): " + fix, e);
    }
  }

  private static byte[] bytes() {
    String platform =
        NativeLibraryLoader.platform(System.getProperty("os.name"), System.getProperty("os.arch"));
    String resource = "/dev/nativemem/native/" + platform + "/" + FILE;
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
      return in.readAllBytes();
    } catch (IOException e) {
      throw new NativeMemoryException("cannot read " + resource + ": " + e.getMessage(), e);
    }
  }

  /** A regular file of ours, writable by no one else, with exactly these bytes. */
  private static boolean isSameOwnFile(Path target, byte[] library) throws IOException {
    if (!FileOwnership.isOwnRegularFile(target)
        || (Files.getPosixFilePermissions(target, LinkOption.NOFOLLOW_LINKS).stream()
            .anyMatch(
                p -> p == PosixFilePermission.GROUP_WRITE || p == PosixFilePermission.OTHERS_WRITE))
        || Files.size(target) != library.length) {
      return false;
    }
    return Arrays.equals(Files.readAllBytes(target), library);
  }

  /**
   * The mount options of the file system holding {@code real} if they include {@code noexec}, else
   * {@code null}: the last {@code /proc/self/mountinfo} entry whose mount point is the longest
   * prefix of the path is the mount in effect.
   */
  static String noexecMount(Path real) throws IOException {
    Path mountinfo = Paths.get("/proc/self/mountinfo");
    if (!Files.isReadable(mountinfo)) {
      return null;
    }
    String options = null;
    int longest = -1;
    for (String line : Files.readAllLines(mountinfo)) {
      // id parent major:minor root mount-point options [optional fields] - type source super
      String[] fields = line.split(" ");
      if (fields.length < 6) {
        continue;
      }
      Path mountPoint = Paths.get(unescape(fields[4]));
      if (real.startsWith(mountPoint) && mountPoint.getNameCount() >= longest) {
        longest = mountPoint.getNameCount();
        options = fields[5];
      }
    }
    return options != null && Arrays.asList(options.split(",")).contains("noexec") ? options : null;
  }

  /** mountinfo writes space, tab, newline and backslash as octal escapes ({@code \040}). */
  private static String unescape(String field) {
    java.util.regex.Matcher m = java.util.regex.Pattern.compile("\\\\([0-7]{3})").matcher(field);
    StringBuilder out = new StringBuilder();
    while (m.find()) {
      m.appendReplacement(out, "");
      out.append((char) Integer.parseInt(m.group(1), 8));
    }
    m.appendTail(out);
    return out.toString();
  }
}
