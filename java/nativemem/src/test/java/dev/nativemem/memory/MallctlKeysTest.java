package dev.nativemem.memory;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.nativemem.NativeMemory;
import org.junit.jupiter.api.Test;

/** Case 10 of issue 11: keys whose read acts or returns a pointer are refused by name. */
class MallctlKeysTest {

  @Test
  void keysThatActOrReturnPointersAreRefusedWhateverTheAllocator() {
    for (String key : new String[] {"arenas.create", "tcache.create", "version", "opt.dss"}) {
      IllegalArgumentException e =
          assertThrows(IllegalArgumentException.class, () -> NativeMemory.mallctl(key));
      assertTrue(e.getMessage().contains("mallctl key '" + key + "'"), e.getMessage());
      assertTrue(e.getMessage().contains("it reads config.*, opt.* and stats.*"), e.getMessage());
    }
  }
}
