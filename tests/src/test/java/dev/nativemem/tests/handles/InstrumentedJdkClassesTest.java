package dev.nativemem.tests.handles;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The agent keeps the JDK's zip classes as it instruments them, so the next JVM start skips ASM:
 * the kept form tracks exactly as a fresh one does, is reused as it is, and a damaged one is
 * rewritten.
 */
class InstrumentedJdkClassesTest {
  private static final String INFLATER = "-java.util.zip.Inflater-";

  @Test
  void keptClassesTrackAsFreshOnesAndDamageIsRepaired(@TempDir Path dir) throws Exception {
    Path base = dir.resolve("base");
    // leaked, closed, open Inflaters of the cleaner scenario, from its own count
    assertEquals("5 1 0", cleanerCounts(base));
    Path inflater = kept(base, INFLATER);
    assertEquals(
        "r--------", PosixFilePermissions.toString(Files.getPosixFilePermissions(inflater)));
    byte[] written = Files.readAllBytes(inflater);
    Object inode = Files.getAttribute(inflater, "unix:ino");

    assertEquals("5 1 0", cleanerCounts(base));
    assertEquals(inode, Files.getAttribute(inflater, "unix:ino"), "kept class written again");

    byte[] damaged = written.clone();
    damaged[damaged.length - 1] ^= 1;
    Files.setPosixFilePermissions(inflater, PosixFilePermissions.fromString("rw-------"));
    Files.write(inflater, damaged);
    Files.setPosixFilePermissions(inflater, PosixFilePermissions.fromString("r--------"));
    assertEquals("5 1 0", cleanerCounts(base));
    assertArrayEquals(written, Files.readAllBytes(kept(base, INFLATER)), "damage not repaired");
  }

  private static String cleanerCounts(Path base) throws Exception {
    ScenarioJvm.Result result =
        new ScenarioJvm()
            .mainClass(BehaviourScenarios.class.getName())
            .jvmArg("-Dnativemem.tmpdir=" + base)
            .agent("level=full")
            .run("cleaner");
    assertEquals(0, result.exitCode(), result.toString());
    return result.value("cleaner");
  }

  private static Path kept(Path base, String name) throws Exception {
    try (Stream<Path> files = Files.list(base)) {
      List<Path> matches =
          files
              .filter(f -> f.getFileName().toString().startsWith("class-"))
              .filter(f -> f.getFileName().toString().contains(name))
              .collect(Collectors.toList());
      assertTrue(matches.size() == 1, "one kept " + name + " in " + base + ": " + matches);
      return matches.get(0);
    }
  }
}
