package dev.nativemem.internal;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A file written through PartialFile appears whole, with its mode, and nothing else stays. */
class PartialFileTest {
  @TempDir Path dir;

  private List<String> names() throws IOException {
    try (Stream<Path> files = Files.list(dir)) {
      return files.map(f -> f.getFileName().toString()).sorted().collect(Collectors.toList());
    }
  }

  @Test
  void theTargetAppearsWholeWithItsModeAndNoPartialFileStays() throws Exception {
    Path target = dir.resolve("lib.so");
    byte[] bytes = "library".getBytes(StandardCharsets.UTF_8);
    PartialFile.writeThenMove(target, PartialFile.of(bytes), "r-x------");
    assertArrayEquals(bytes, Files.readAllBytes(target));
    assertEquals("r-x------", PosixFilePermissions.toString(Files.getPosixFilePermissions(target)));
    assertEquals(List.of("lib.so"), names());

    byte[] newer = "newer".getBytes(StandardCharsets.UTF_8);
    PartialFile.writeThenMove(target, PartialFile.of(newer), "r--------");
    assertArrayEquals(newer, Files.readAllBytes(target), "replaces in one rename");
    assertEquals(List.of("lib.so"), names());
  }

  @Test
  void aFailedWriteLeavesNeitherTargetNorPartialFile() throws Exception {
    Path target = dir.resolve("class.bin");
    IOException failure =
        assertThrows(
            IOException.class,
            () ->
                PartialFile.writeThenMove(
                    target,
                    partial -> {
                      Files.write(partial, new byte[] {1, 2});
                      throw new IOException("disk full");
                    },
                    "r--------"));
    assertEquals("disk full", failure.getMessage());
    assertFalse(Files.exists(target));
    assertEquals(List.of(), names());
  }

  @Test
  void aWrittenFileWaitsUnderItsPartialNameUntilMoved() throws Exception {
    Path target = dir.resolve("lock");
    PartialFile file = PartialFile.write(target, PartialFile.of(new byte[0]), "rw-------");
    assertFalse(Files.exists(target));
    assertEquals(dir, file.path().getParent());
    String name = file.path().getFileName().toString();
    assertEquals(true, name.startsWith("lock.") && name.endsWith(PartialFile.SUFFIX), name);
    file.moveTo(target);
    file.discard();
    assertEquals(List.of("lock"), names());
  }
}
