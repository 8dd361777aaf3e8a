package dev.nativemem.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.nativemem.base.NativeMemoryException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The Java face of the file layer: each operation, its refusals, its jobs and its one close. */
class DirectoryHandleTest {
  @TempDir Path temp;

  /** A handle of {@code path} from the job that opens the watch's directory. */
  private static DirectoryHandle open(Path path) {
    Map<String, Object> opened =
        Json.parseObject(
            NativeBridge.call("watch_directory_open", Map.of("path", path.toString())));
    return DirectoryHandle.adopt(
        Json.number(opened, "directory"), Path.of(Json.string(opened, "path")));
  }

  @Test
  void stepsWorkRelativeToTheHandleAndItClosesOnce() throws Exception {
    DirectoryHandle dir = open(temp);
    assertEquals(temp, dir.path());
    Files.createDirectory(temp.resolve("kid"));
    try (DirectoryHandle kid = dir.openDirectory("kid")) {
      kid.replace("manifest.json", "first");
      kid.replace("manifest.json", "second");
      assertEquals("second", Files.readString(kid.anchored("manifest.json")));
      try (Stream<Path> files = Files.list(temp.resolve("kid"))) {
        assertEquals(1, files.count(), "no temporary file left beside it");
      }
    }
    Files.createSymbolicLink(temp.resolve("link"), temp.resolve("kid"));
    assertThrows(NativeMemoryException.class, () -> dir.openDirectory("link"));
    assertThrows(IllegalArgumentException.class, () -> dir.openDirectory("a/b"));
    assertThrows(IllegalArgumentException.class, () -> dir.removeTree(".."));
    assertTrue(dir.removeTree("kid"));
    assertFalse(Files.exists(temp.resolve("kid")));
    assertTrue(Files.exists(temp.resolve("link"), LinkOption.NOFOLLOW_LINKS));
    dir.close();
    dir.close();
    IllegalStateException closed =
        assertThrows(IllegalStateException.class, () -> dir.removeTree("x"));
    assertTrue(closed.getMessage().contains("is closed"), closed.getMessage());
    assertThrows(
        IllegalStateException.class,
        () -> dir.call("watch_directory_prune", Map.of("keep", 1, "max_bytes", 1, "newest", "x")));
  }

  @Test
  void aJobOnTheHandleGetsItsDescriptorAndNoOther() throws Exception {
    Path older = Files.createDirectory(temp.resolve("nativemem-incident-7-20261130T100000Z-limit"));
    Path newer = Files.createDirectory(temp.resolve("nativemem-incident-7-20261130T110000Z-limit"));
    try (DirectoryHandle dir = open(temp)) {
      Map<String, Object> request = new java.util.HashMap<>();
      request.put("keep", 1);
      request.put("max_bytes", Long.MAX_VALUE);
      request.put("newest", newer.getFileName().toString());
      request.put("directory", 0); // a caller's own descriptor is replaced by the handle's
      assertEquals(
          List.of(older.getFileName().toString()),
          Json.parseList(dir.call("watch_directory_prune", request)));
    }
    assertFalse(Files.exists(older));
    assertTrue(Files.exists(newer));
  }

  @Test
  void aMissingDirectoryIsMadePrivate() throws Exception {
    Path deep = temp.resolve("a/b");
    try (DirectoryHandle made = open(deep)) {
      assertEquals("rwx------", PosixFilePermissions.toString(Files.getPosixFilePermissions(deep)));
      assertEquals(FileOwnership.processUid(), (int) Files.getAttribute(deep, "unix:uid"));
    }
  }
}
