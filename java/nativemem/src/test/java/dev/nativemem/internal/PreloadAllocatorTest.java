package dev.nativemem.internal;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.nativemem.base.NativeMemoryException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class PreloadAllocatorTest {

  /** Case 12 of issue 11: the demo has no --dir option, so its message must not point to one. */
  @Test
  void anUnusableDirectoryEndsInTheCallersFix(@TempDir Path dir) throws Exception {
    Path notADirectory = Files.createFile(dir.resolve("file"));
    NativeMemoryException e =
        assertThrows(
            NativeMemoryException.class,
            () ->
                PreloadAllocator.extractTo(
                    notADirectory.resolve("sub"), "start the demo with -Duser.home=<dir>"));
    assertTrue(e.getMessage().endsWith(": start the demo with -Duser.home=<dir>"), e.getMessage());
    assertFalse(e.getMessage().contains("--dir"), e.getMessage());
  }

  @Test
  void narenasNeverOverflows() {
    assertTrue(PreloadAllocator.narenas(PreloadAllocator.MAX_CPUS) <= 4094);
    assertTrue(PreloadAllocator.narenas(Integer.MAX_VALUE) == 4094);
  }
}
