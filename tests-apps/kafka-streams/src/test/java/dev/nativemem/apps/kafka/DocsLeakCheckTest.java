package dev.nativemem.apps.kafka;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.nativemem.apps.harness.AppJvm;
import dev.nativemem.apps.harness.AppRun;
import dev.nativemem.apps.harness.MarkdownBlocks;
import dev.nativemem.apps.harness.PrometheusConfigs;
import java.io.ByteArrayOutputStream;
import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Collectors;
import javax.tools.ToolProvider;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * docs/kafka-streams.md's test class (the block marked
 * <!-- tested: kafka-streams-leak-check -->
 * ), compiled as written with a word count for its {@code topology()} and {@code properties()}, and
 * run by JUnit in a JVM with the agent: as written (the driver closed) it passes; with {@code
 * driver.close()} forgotten it fails with the extension's message.
 */
class DocsLeakCheckTest {
  private static final String TRY =
      "try (TopologyTestDriver driver = new TopologyTestDriver(topology(), properties())) {";

  @TempDir Path tmp;

  @Test
  void documentedTestPassesAndFailsWithoutClose() throws Exception {
    String block =
        MarkdownBlocks.first(
            PrometheusConfigs.DOCS.resolve("kafka-streams.md"),
            "## 4. Fail the test that leaks",
            "java");
    assertTrue(block.contains(TRY), block);
    String classPath =
        System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
    Path classes = Files.createDirectory(tmp.resolve("classes"));
    compile(classPath, classes, source("closes", block));
    compile(
        classPath,
        classes,
        source(
            "forgets",
            block.replace(
                TRY,
                "{ TopologyTestDriver driver = new TopologyTestDriver(topology(), properties());")));
    String runPath = classes + File.pathSeparator + classPath;

    AppRun closes = run(runPath, "closes.WordCountTopologyTest");
    assertEquals(List.of(), failures(closes), closes.toString());
    assertTrue(closes.stdout().contains("SUCCEEDED 1"), closes.toString());

    AppRun forgets = run(runPath, "forgets.WordCountTopologyTest");
    List<String> failed = failures(forgets);
    assertEquals(1, failed.size(), forgets.toString());
    String message = failed.get(0);
    assertTrue(
        message.startsWith("FAILED native handles leaked in 'forgets.WordCountTopologyTest': "),
        message);
    assertFalse(
        message.endsWith(
            ": 0 leaked (garbage-collected while owning native memory), 0 open (never closed)"),
        message);
    // Each kind with its count and creation line; its stack reaches the test's driver line.
    String store =
        "1 leaked RocksDB, created at org.apache.kafka.streams.state.internals.RocksDBStore";
    assertTrue(forgets.stdout().contains(store), forgets.toString());
    assertTrue(
        forgets
            .stdout()
            .contains("at forgets.WordCountTopologyTest.counts(WordCountTopologyTest.java:"),
        forgets.toString());
  }

  private AppRun run(String classPath, String testClass) throws Exception {
    AppRun r = new AppJvm("kafka-docs").main(classPath, LeakCheckRunner.class.getName(), testClass);
    assertEquals(0, r.exitCode(), r.toString());
    return r;
  }

  private static List<String> failures(AppRun r) {
    return r.stdout().lines().filter(l -> l.startsWith("FAILED ")).collect(Collectors.toList());
  }

  /** The block in package {@code pkg}, with the word count it calls and a state dir of its own. */
  private Path source(String pkg, String block) throws Exception {
    String helpers =
        "  static org.apache.kafka.streams.Topology topology() {\n"
            + "    StreamsBuilder builder = new StreamsBuilder();\n"
            + "    builder.stream(\"lines\", Consumed.with(Serdes.String(), Serdes.String()))\n"
            + "        .flatMapValues(line -> Arrays.asList(line.split(\" \")))\n"
            + "        .groupBy((k, word) -> word, Grouped.with(Serdes.String(), Serdes.String()))\n"
            + "        .count()\n"
            + "        .toStream()\n"
            + "        .to(\"counts\", Produced.with(Serdes.String(), Serdes.Long()));\n"
            + "    return builder.build();\n"
            + "  }\n\n"
            + "  static Properties properties() {\n"
            + "    Properties p = new Properties();\n"
            + "    p.put(StreamsConfig.APPLICATION_ID_CONFIG, \"word-count\");\n"
            + "    p.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, \"localhost:9092\");\n"
            + "    p.put(StreamsConfig.STATE_DIR_CONFIG, \""
            + tmp.resolve("state-" + pkg)
            + "\");\n"
            + "    return p;\n"
            + "  }\n";
    String body = block.strip();
    assertTrue(body.endsWith("}"), body);
    String text =
        "package "
            + pkg
            + ";\n\n"
            + "import dev.nativemem.junit.NativeLeakCheck;\n"
            + "import java.util.Arrays;\n"
            + "import java.util.Properties;\n"
            + "import org.apache.kafka.common.serialization.Serdes;\n"
            + "import org.apache.kafka.streams.StreamsBuilder;\n"
            + "import org.apache.kafka.streams.StreamsConfig;\n"
            + "import org.apache.kafka.streams.TopologyTestDriver;\n"
            + "import org.apache.kafka.streams.kstream.Consumed;\n"
            + "import org.apache.kafka.streams.kstream.Grouped;\n"
            + "import org.apache.kafka.streams.kstream.Produced;\n"
            + "import org.junit.jupiter.api.Test;\n"
            + "import org.junit.jupiter.api.extension.ExtendWith;\n\n"
            + body.substring(0, body.length() - 1)
            + "\n"
            + helpers
            + "}\n";
    Path dir = Files.createDirectories(tmp.resolve("src").resolve(pkg));
    Path file = dir.resolve("WordCountTopologyTest.java");
    Files.writeString(file, text);
    return file;
  }

  private static void compile(String classPath, Path classes, Path source) throws Exception {
    ByteArrayOutputStream errors = new ByteArrayOutputStream();
    int rc =
        ToolProvider.getSystemJavaCompiler()
            .run(null, null, errors, "-cp", classPath, "-d", classes.toString(), source.toString());
    assertEquals(0, rc, errors + "\n" + Files.readString(source));
  }
}
