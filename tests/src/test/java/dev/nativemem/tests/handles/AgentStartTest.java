package dev.nativemem.tests.handles;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.nativemem.tests.handles.ScenarioJvm.Result;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
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

    ScenarioJvm jvm =
        new ScenarioJvm().scenarioClasses(classes).jvmArg("-XX:SharedArchiveFile=" + archive);
    if (Runtime.version().feature() >= 24) {
      // JDK 24+ warns at any System.load from the class path unless native access is granted, for
      // every library (troubleshooting.md, "A restricted method in java.lang.System has been
      // called"); nothing else may be printed.
      jvm.jvmArg("--enable-native-access=ALL-UNNAMED");
    }
    Result started = jvm.agent("").run("leaks", "3");
    assertEquals(0, started.exitCode(), started.toString());
    assertEquals("", started.stderr(), started.toString());
    // Created after the start, by classes prepared after it: each one counted.
    assertEquals("3", started.value("leaked_options"), started.toString());
    assertTrue(started.value("report_json").contains("\"kind\":\"Inflater\""), started.toString());
  }

  /**
   * What the zip hooks' first recorded creation needs is loaded and initialised at the start,
   * before the JDK's zip classes are instrumented: loaded at that first creation, it would be read
   * from the jar through the JDK's {@code ZipFile} inside that ZipFile's own hooked Inflater calls,
   * and initialised under its lock, where another thread's hook can wait for it.
   */
  @Test
  void whatTheZipHooksNeedIsLoadedBeforeTheJdksZipClassesAreInstrumented() throws Exception {
    Path log = dir.resolve("class-load.txt");
    Result run =
        new ScenarioJvm()
            .jvmArg("-Xlog:class+load=info:file=" + log)
            .agent("level=full")
            .run("workload");
    assertEquals(0, run.exitCode(), run.toString());
    List<String> loads = Files.readAllLines(log);
    int instrumented = firstLine(loads, " java.util.zip.Inflater source: __VM_RedefineClasses__");
    assertTrue(instrumented >= 0, "the JDK's Inflater is instrumented: " + log);
    for (String name :
        List.of(
            "dev.nativemem.handles.tracking.CreationSites",
            "dev.nativemem.handles.tracking.TrackedHandle",
            "dev.nativemem.handles.tracking.TrackedHandle$OwnerProbe",
            "dev.nativemem.handles.catalogue.LeakCatalogue",
            // a first kind, thread or site reaches the registry as a JSON job
            "dev.nativemem.internal.Json",
            "dev.nativemem.shaded.jackson.jr.ob.JSON",
            "dev.nativemem.shaded.jackson.jr.ob.impl.JSONWriter",
            "dev.nativemem.shaded.jackson.jr.ob.impl.JSONReader",
            "dev.nativemem.shaded.jackson.core.json.WriterBasedJsonGenerator",
            "dev.nativemem.shaded.jackson.core.json.ReaderBasedJsonParser")) {
      int loaded = firstLine(loads, " " + name + " source: ");
      assertTrue(
          loaded >= 0 && loaded < instrumented,
          name
              + " loaded at line "
              + loaded
              + " of "
              + log
              + ", the Inflater instrumented at "
              + instrumented);
    }
  }

  private static int firstLine(List<String> lines, String part) {
    for (int i = 0; i < lines.size(); i++) {
      if (lines.get(i).contains(part)) {
        return i;
      }
    }
    return -1;
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
