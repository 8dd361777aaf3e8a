package dev.nativemem.agent;

import dev.nativemem.internal.FileOwnership;
import dev.nativemem.internal.NativeLibraryLoader;
import dev.nativemem.internal.PartialFile;
import dev.nativemem.internal.SharedLibraryCache;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFileAttributes;
import java.util.zip.CRC32;

/**
 * The JDK's {@code java.util.zip} classes as this build of the agent instruments them, kept beside
 * the shared library in the private base directory, so that a JVM start retransforms them without
 * loading and running ASM (about a third of the agent's start). A file is named by this build, the
 * class and the CRC-32 and length of the JDK's class file (the build is the agent jar's content,
 * {@code NativeLibraryLoader.jarIdentity}: image builders give every file one fixed modification
 * time, so a size and time would hand one build another's bytecode, calling hooks it lacks); it
 * holds the CRC-32 of the instrumented bytes before them, checked on every read. Its trust is the
 * library's: a file this user owns, mode 0400, in a directory only this user can write, written
 * under a temporary name and renamed; removed like the library's files when unused for a while.
 */
final class InstrumentedJdkClasses {

  private InstrumentedJdkClasses() {}

  /** The cached instrumented form of {@code original}, or null. */
  static byte[] get(String className, byte[] original) {
    try {
      Path file = fileFor(className, original);
      PosixFileAttributes attributes =
          Files.readAttributes(file, PosixFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
      if (!attributes.isRegularFile()
          || attributes.size() <= Long.BYTES
          || attributes.size() > 2L * original.length + 65536
          || !FileOwnership.isOwn(file)) {
        return null;
      }
      SharedLibraryCache.markUsed(file, attributes);
      ByteBuffer content = ByteBuffer.wrap(Files.readAllBytes(file));
      long crc = content.getLong();
      byte[] instrumented = new byte[content.remaining()];
      content.get(instrumented);
      return crc32(instrumented) == crc ? instrumented : null;
    } catch (IOException | RuntimeException e) {
      return null; // absent or unreadable: instrument again
    }
  }

  /** Keeps {@code instrumented} for the next JVM; best effort. */
  static void put(String className, byte[] original, byte[] instrumented) {
    try {
      Path file = fileFor(className, original);
      ByteBuffer content = ByteBuffer.allocate(Long.BYTES + instrumented.length);
      content.putLong(crc32(instrumented)).put(instrumented);
      PartialFile.writeThenMove(file, PartialFile.of(content.array()), "r--------");
    } catch (IOException | RuntimeException e) {
      // The next JVM instruments again.
    }
  }

  /** Fails when the library did not come from a jar file: nothing names this build then. */
  private static Path fileFor(String className, byte[] original) throws IOException {
    String build = NativeLibraryLoader.jarIdentity();
    if (build == null) {
      throw new IOException("no jar file names this build");
    }
    return NativeLibraryLoader.privateBase()
        .resolve(
            SharedLibraryCache.CLASS_PREFIX
                + build
                + "-"
                + className.replace('/', '.')
                + "-"
                + Long.toHexString(crc32(original))
                + "-"
                + original.length);
  }

  private static long crc32(byte[] bytes) {
    CRC32 crc = new CRC32();
    crc.update(bytes, 0, bytes.length);
    return crc.getValue();
  }
}
