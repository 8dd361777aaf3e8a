package dev.nativemem.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.nativemem.internal.NativeLibraryLoader;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

class DemoCommandTest {
  /**
   * The core jar has no demo: {@code demo} fails as every command does (standard error, exit 1) and
   * says how to get the demo's jar, naming this version's file rather than a placeholder.
   */
  @Test
  void withoutTheDemosJarItSaysHowToBuildAndRunIt() {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    int code =
        NativeMemoryCli.run(
            new PrintStream(out, true, StandardCharsets.UTF_8),
            new PrintStream(err, true, StandardCharsets.UTF_8),
            "demo");
    String said = err.toString(StandardCharsets.UTF_8);
    assertEquals(1, code, said);
    assertEquals("", out.toString(StandardCharsets.UTF_8));
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
