package dev.nativemem.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.nativemem.internal.NativeLibraryLoader;
import org.junit.jupiter.api.Test;

class DemoCommandTest {
  /**
   * The core jar has no demo: {@code demo} fails as every command does (standard error, exit 1) and
   * says how to get the demo's jar, naming this version's file rather than a placeholder.
   */
  @Test
  void withoutTheDemosJarItSaysHowToBuildAndRunIt() {
    CliRun run = CliRun.of("demo");
    String said = run.err;
    assertEquals(1, run.exit, said);
    assertEquals("", run.out);
    assertTrue(said.startsWith("nativemem: the demo is not in this jar"), said);
    assertTrue(said.contains("mvn -B -q package -DskipTests"), said);
    assertTrue(
        said.contains(
            "java -jar java/nativemem-demo/target/nativemem-demo-"
                + NativeLibraryLoader.javaVersion()
                + ".jar demo"),
        said);
  }
}
