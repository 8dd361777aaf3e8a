package dev.nativemem.internal;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.nativemem.base.NativeMemoryException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Map;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The Java face of the file layer: each operation, its refusals and its one close. */
class DirectoryHandleTest {
  @TempDir Path temp;

  @Test
  void operationsWorkRelativeToTheHandleAndCloseOnce() throws Exception {
    DirectoryHandle dir = DirectoryHandle.open(temp);
    try (DirectoryHandle kid = dir.makePrivateDirectory("kid")) {
      assertEquals(
          "rwx------",
          PosixFilePermissions.toString(Files.getPosixFilePermissions(temp.resolve("kid"))));
      assertTrue(kid.isPrivateToUs());
      assertTrue(kid.writeNew("a", new byte[] {1, 2}));
      assertFalse(kid.writeNew("a", new byte[] {3}), "never replaces");
      assertArrayEquals(new byte[] {1, 2}, kid.readRegular("a", 2));
      assertNull(kid.readRegular("absent", 2));
      IllegalArgumentException big =
          assertThrows(IllegalArgumentException.class, () -> kid.readRegular("a", 1));
      assertTrue(big.getMessage().contains("more than the 1 bytes"), big.getMessage());
      assertTrue(kid.rename("a", dir, "moved"));
      assertEquals(0, dir.treeBytes("kid"));
      assertEquals(2, Files.size(temp.resolve("moved")));
    }
    Files.createSymbolicLink(temp.resolve("link"), temp.resolve("moved"));
    Map<String, DirectoryHandle.Entry.Kind> kinds =
        dir.list().stream()
            .collect(Collectors.toMap(DirectoryHandle.Entry::name, DirectoryHandle.Entry::kind));
    assertEquals(
        Map.of(
            "kid", DirectoryHandle.Entry.Kind.DIRECTORY,
            "moved", DirectoryHandle.Entry.Kind.FILE,
            "link", DirectoryHandle.Entry.Kind.LINK),
        kinds);
    IllegalArgumentException link =
        assertThrows(IllegalArgumentException.class, () -> dir.readRegular("link", 10));
    assertTrue(link.getMessage().contains("symbolic link"), link.getMessage());
    assertThrows(NativeMemoryException.class, () -> dir.openDirectory("link"));
    assertThrows(IllegalArgumentException.class, () -> dir.has("a/b"));
    assertThrows(IllegalArgumentException.class, () -> dir.removeTree(".."));
    assertTrue(dir.removeTree("kid"));
    assertTrue(dir.freeBytes() > 0 && dir.totalBytes() >= dir.freeBytes());
    dir.close();
    dir.close();
    IllegalStateException closed = assertThrows(IllegalStateException.class, () -> dir.has("x"));
    assertTrue(closed.getMessage().contains("is closed"), closed.getMessage());
  }

  @Test
  void aMissingDirectoryIsMadeOnlyWhenAsked() {
    Path deep = temp.resolve("a/b");
    assertThrows(NativeMemoryException.class, () -> DirectoryHandle.open(deep));
    try (DirectoryHandle made = DirectoryHandle.openOrCreate(deep)) {
      assertEquals(0700, made.mode());
      assertEquals(FileOwnership.processUid(), made.ownerUid());
    }
  }
}
