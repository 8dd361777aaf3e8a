package dev.nativemem.apps.flinkmetrics;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.nativemem.apps.harness.MarkdownBlocks;
import dev.nativemem.apps.harness.PrometheusConfigs;
import java.nio.file.Files;
import java.nio.file.Paths;
import org.junit.jupiter.api.Test;

/** docs/flink.md's Java is {@link DocsExampleFunction}'s, verbatim (so it compiles). */
class FlinkDocsTest {
  // The block marked <!-- tested: flink-rich-function --> in docs/flink.md.
  @Test
  void javaBlockIsTheCompiledExample() throws Exception {
    String block =
        MarkdownBlocks.first(
            PrometheusConfigs.DOCS.resolve("flink.md"),
            "## 2. One call in any rich function",
            "java");
    String source =
        Files.readString(
            Paths.get(System.getProperty("test.source"))
                .resolve("dev/nativemem/apps/flinkmetrics/DocsExampleFunction.java"));
    String begins = "  // docs/flink.md block begins\n";
    String body =
        source.substring(
            source.indexOf(begins) + begins.length(),
            source.indexOf("  // docs/flink.md block ends"));
    assertEquals(block.strip(), body.replaceAll("(?m)^  ", "").strip());
  }
}
