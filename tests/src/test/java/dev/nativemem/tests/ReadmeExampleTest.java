package dev.nativemem.tests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** docs/getting-started.md's Java example is code that compiles and runs, not prose. */
class ReadmeExampleTest {
  private static final Path ROOT = Paths.get(System.getProperty("user.dir")).getParent();

  @Test
  void readmeBlockIsTheExampleVerbatim() throws Exception {
    String block = DocBlocks.block("getting-started.md", "readme-example");
    String example =
        new String(
            Files.readAllBytes(
                ROOT.resolve("tests/src/test/java/dev/nativemem/tests/ReadmeExample.java")),
            StandardCharsets.UTF_8);
    String body =
        example.substring(
            example.indexOf("// README block begins\n") + "// README block begins\n".length(),
            example.indexOf("    // README block ends"));
    StringBuilder unindented = new StringBuilder();
    for (String line : body.split("\n")) {
      unindented.append(line.startsWith("    ") ? line.substring(4) : line).append('\n');
    }
    assertEquals(block, unindented.toString());
  }

  @Test
  void exampleRunsUnderAProfilingJemalloc(@TempDir Path dir) throws Exception {
    ForkedJvm.Result r =
        new ForkedJvm()
            .withTestClasses()
            .env("LD_PRELOAD", ForkedJvm.OWN_JEMALLOC.toString())
            .jvmArg("-Dnativemem.profile.dir=" + dir)
            .main(ReadmeExample.class.getName());
    assertEquals(0, r.exitCode, r.toString());
    assertTrue(r.stdout.contains("ALLOCATOR JEMALLOC"), r.stdout);
    assertTrue(r.stdout.contains("RSS attributed"), r.stdout);
    // 200 level-9 Deflaters hold zlib's buffers: the analysis names deflateInit2_.
    assertTrue(r.stdout.matches("(?s).*In use .* MiB in \\d+ stacks.*deflateInit2_.*"), r.stdout);
  }
}
