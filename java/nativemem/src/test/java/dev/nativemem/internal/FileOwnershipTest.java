package dev.nativemem.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.nativemem.base.NativeMemoryException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.attribute.PosixFilePermissions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The one walk that resolves a directory nativemem loads code from (links of others: see tests).
 */
class FileOwnershipTest {
  private static final String FIX = "do something else";

  @Test
  void ownLinksAreFollowedOnceAndTheRealPathReturned(@TempDir Path tmp) throws Exception {
    Path dir = tmp.toRealPath();
    Path real = Files.createDirectories(dir.resolve("real/sub"));
    Files.createSymbolicLink(dir.resolve("absolute"), dir.resolve("real"));
    Files.createSymbolicLink(dir.resolve("relative"), Paths.get("real/../real"));
    assertEquals(real, FileOwnership.requireNoOtherWriterAbove(dir.resolve("absolute/sub"), FIX));
    assertEquals(real, FileOwnership.requireNoOtherWriterAbove(dir.resolve("relative/sub"), FIX));
    assertEquals(
        real, FileOwnership.requireNoOtherWriterAbove(dir.resolve("absolute/sub/../sub"), FIX));
  }

  @Test
  void missingDirectoriesAreMadePrivateBehindTheRealPath(@TempDir Path tmp) throws Exception {
    Path dir = tmp.toRealPath();
    Files.createDirectory(dir.resolve("real"));
    Files.createSymbolicLink(dir.resolve("link"), dir.resolve("real"));
    Path made =
        FileOwnership.ownDirectory(
            dir.resolve("link/a/b"), PosixFilePermissions.fromString("rwx------"), FIX);
    assertEquals(dir.resolve("real/a/b"), made);
    assertTrue(Files.isDirectory(made, LinkOption.NOFOLLOW_LINKS));
    assertEquals("rwx------", PosixFilePermissions.toString(Files.getPosixFilePermissions(made)));
  }

  @Test
  void aLoopOfLinksAndAFileOnTheWayAreRefused(@TempDir Path tmp) throws Exception {
    Path dir = tmp.toRealPath();
    Files.createSymbolicLink(dir.resolve("loop"), dir.resolve("loop"));
    NativeMemoryException loop =
        assertThrows(
            NativeMemoryException.class,
            () -> FileOwnership.requireNoOtherWriterAbove(dir.resolve("loop/x"), FIX));
    assertTrue(loop.getMessage().contains("more than 40 symbolic links"), loop.getMessage());
    Files.write(dir.resolve("file"), new byte[0]);
    NativeMemoryException file =
        assertThrows(
            NativeMemoryException.class,
            () ->
                FileOwnership.ownDirectory(
                    dir.resolve("file/x"), PosixFilePermissions.fromString("rwx------"), FIX));
    assertTrue(file.getMessage().endsWith("is not a directory: " + FIX), file.getMessage());
    assertFalse(Files.exists(dir.resolve("file/x"), LinkOption.NOFOLLOW_LINKS));
  }
}
