package dev.nativemem.tests.handles;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.nativemem.tests.handles.ScenarioJvm.Result;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.jar.JarEntry;
import java.util.jar.JarOutputStream;
import java.util.stream.Stream;
import java.util.zip.ZipFile;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The agent's start in a JVM with an application CDS archive: nothing printed (no class path is
 * appended to the bootstrap loader's, which made the JVM warn and stop sharing the application's
 * classes), and every class it instruments still instrumented, those loaded after the start
 * included (RocksDB's, through the core's ClassPrepare watch; the JDK's zip classes, through the
 * one class nativemem defines in the bootstrap loader).
 */
class AgentStartTest {
  @TempDir Path dir;

  @Test
  void defaultStartPrintsNothingWithAnApplicationCdsArchiveAndCountsEveryCreation()
      throws Exception {
    Path archive = dir.resolve("app.jsa");
    Path classes = jarOf(ScenarioJvm.codeSource(HandleScenarios.class), dir.resolve("classes.jar"));
    // Trained without the agent, as Spring Boot's CDS training run is.
    Result training =
        new ScenarioJvm()
            .scenarioClasses(classes)
            .jvmArg("-XX:ArchiveClassesAtExit=" + archive)
            .run("workload");
    assertEquals(0, training.exitCode(), training.toString());
    assertTrue(Files.isRegularFile(archive), training.toString());

    Result started =
        new ScenarioJvm()
            .scenarioClasses(classes)
            .jvmArg("-XX:SharedArchiveFile=" + archive)
            .agent("")
            .run("leaks", "3");
    assertEquals(0, started.exitCode(), started.toString());
    assertEquals("", started.stderr(), started.toString());
    // Created after the start, by classes prepared after it: each one counted.
    assertEquals("3", started.value("leaked_options"), started.toString());
    assertTrue(started.value("report_json").contains("\"kind\":\"Inflater\""), started.toString());
  }

  /** The test classes as a jar. */
  private static Path jarOf(Path classes, Path jar) throws IOException {
    try (JarOutputStream out = new JarOutputStream(Files.newOutputStream(jar));
        Stream<Path> files = Files.walk(classes)) {
      for (Path file : (Iterable<Path>) files.filter(Files::isRegularFile)::iterator) {
        out.putNextEntry(new JarEntry(classes.relativize(file).toString()));
        Files.copy(file, out);
        out.closeEntry();
      }
    }
    return jar;
  }

  @Test
  void theBootstrapBridgeIsNotAClassAnyLoaderCanFindInTheJar() throws Exception {
    try (ZipFile jar = new ZipFile(ScenarioJvm.JAR.toFile())) {
      assertTrue(
          jar.stream().noneMatch(e -> e.getName().startsWith("dev/nativemem/boot/")),
          "dev/nativemem/boot/ must not be in " + ScenarioJvm.JAR);
      assertNotNull(jar.getEntry("dev/nativemem/agent/ZipHooks.bytes"));
    }
  }
}
