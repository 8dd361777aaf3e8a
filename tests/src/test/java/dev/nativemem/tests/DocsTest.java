package dev.nativemem.tests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The documentation cannot rot unseen: its links and anchors resolve, and each shell or Java block
 * is run (or checked against the code) by a named test, or says why it cannot be.
 */
class DocsTest {
  /** A Markdown link or image: {@code [text](target)}, the target without a title. */
  private static final Pattern LINK = Pattern.compile("\\]\\(([^)\\s]+)\\)");

  /** A path to a Markdown page named in a YAML comment, as docs/prometheus-alerts.yaml does. */
  private static final Pattern DOC_PATH = Pattern.compile("\\bdocs/[A-Za-z0-9_.-]+\\.(md|yaml)");

  /** A test class named in a "not run" reason: it must exist. */
  private static final Pattern TEST_NAME = Pattern.compile("\\b[A-Z][A-Za-z]+(Test|Child)\\b");

  /** Languages whose blocks are commands or code a reader runs. */
  private static final List<String> RUNNABLE = List.of("sh", "bash", "shell", "java");

  @Test
  void everyRelativeLinkAndAnchorResolves() throws IOException {
    List<String> broken = new ArrayList<>();
    for (Path page : DocPages.pages()) {
      String text = DocPages.read(page);
      Matcher m = LINK.matcher(DocPages.withoutFencedBlocks(text));
      while (m.find()) {
        String target = m.group(1);
        if (target.matches("[a-z]+:.*")) {
          continue; // https:, mailto:: not ours to check offline
        }
        int hash = target.indexOf('#');
        String file = hash < 0 ? target : target.substring(0, hash);
        Path resolved = file.isEmpty() ? page : page.getParent().resolve(file).normalize();
        if (!Files.exists(resolved)) {
          broken.add(DocPages.name(page) + ": " + target + " (no such file)");
        } else if (hash >= 0 && !DocPages.anchors(resolved).contains(target.substring(hash + 1))) {
          broken.add(DocPages.name(page) + ": " + target + " (no such heading)");
        }
      }
    }
    for (Path yaml : DocPages.yamlFiles()) {
      Matcher m = DOC_PATH.matcher(DocPages.read(yaml));
      while (m.find()) {
        if (!Files.exists(DocPages.ROOT.resolve(m.group()))) {
          broken.add(DocPages.name(yaml) + ": " + m.group() + " (no such file)");
        }
      }
    }
    assertEquals(List.of(), broken, "broken links");
  }

  @Test
  void everyPageIsReachableFromTheReadme() throws IOException {
    List<Path> reached = new ArrayList<>();
    List<Path> todo = new ArrayList<>(List.of(DocPages.ROOT.resolve("README.md")));
    while (!todo.isEmpty()) {
      Path page = todo.remove(todo.size() - 1);
      if (reached.contains(page) || !Files.exists(page)) {
        continue;
      }
      reached.add(page);
      if (!page.toString().endsWith(".md")) {
        continue;
      }
      Matcher m = LINK.matcher(DocPages.withoutFencedBlocks(DocPages.read(page)));
      while (m.find()) {
        String target = m.group(1).replaceAll("#.*", "");
        if (!target.isEmpty() && !target.matches("[a-z]+:.*")) {
          todo.add(page.getParent().resolve(target).normalize());
        }
      }
    }
    List<String> unreached =
        DocPages.pages().stream()
            .filter(p -> !reached.contains(p))
            .map(DocPages::name)
            .collect(Collectors.toList());
    assertEquals(List.of(), unreached, "pages no link from README.md leads to");
  }

  /**
   * A shell or Java block carries {@code <!-- tested: NAME -->}, NAME written in quotes in a test
   * (or in .ci/run), or {@code <!-- not run: why -->}; every block names its language, so a command
   * cannot hide in an unlabelled one (output is {@code text}).
   */
  @Test
  void everyCommandOrCodeBlockIsTestedOrSaysWhyNot() throws IOException {
    String tests = testSources();
    List<String> problems = new ArrayList<>();
    for (Path page : DocPages.pages()) {
      for (DocPages.Block block : DocPages.blocks(page)) {
        String where = DocPages.name(page) + ":" + block.line;
        if (block.language.isEmpty()) {
          problems.add(where + ": a fence without a language (text for output)");
          continue;
        }
        if (!RUNNABLE.contains(block.language)) {
          continue;
        }
        if (block.tested != null) {
          if (!tests.contains("\"" + block.tested + "\"")
              && !tests.contains("tested: " + block.tested + " ")) {
            problems.add(where + ": no test names block '" + block.tested + "'");
          }
        } else if (block.notRun != null && !block.notRun.isEmpty()) {
          Matcher test = TEST_NAME.matcher(block.notRun);
          while (test.find()) {
            if (!tests.contains("class " + test.group() + " ")) {
              problems.add(where + ": the reason names " + test.group() + ", which is no test");
            }
          }
        } else {
          problems.add(
              where
                  + ": a "
                  + block.language
                  + " block marked neither <!-- tested: NAME --> nor <!-- not run: why -->");
        }
      }
    }
    assertEquals(List.of(), problems, "untested blocks");
  }

  /** The check above can fail: a page with an unmarked command and a broken anchor. */
  @Test
  void theChecksSeeAnUnmarkedBlockAndAMissingHeading(@org.junit.jupiter.api.io.TempDir Path dir)
      throws IOException {
    Path page = dir.resolve("page.md");
    Files.write(
        page,
        ("# Title\n\n```sh\nrm -rf /\n```\n\n<!-- tested: x -->\n```java\nint a;\n```\n"
                + "[here](#title) [there](#nowhere)\n")
            .getBytes(StandardCharsets.UTF_8));
    List<DocPages.Block> blocks = DocPages.blocks(page);
    assertEquals(2, blocks.size());
    assertEquals(null, blocks.get(0).tested);
    assertEquals(null, blocks.get(0).notRun);
    assertEquals("x", blocks.get(1).tested);
    assertTrue(DocPages.anchors(page).contains("title"));
    assertTrue(!DocPages.anchors(page).contains("nowhere"));
  }

  @Test
  void anchorsAreGitHubs() {
    assertEquals("heap-profiles-on-demand", DocPages.slug("Heap profiles on demand"));
    assertEquals(
        "4-attach-kubectl-exec-no-jdkattach-needed",
        DocPages.slug("4. Attach: `kubectl exec`, no `jdk.attach` needed"));
    assertEquals(
        "native-handle-leaks-rocksdb-zlib", DocPages.slug("Native-handle leaks (RocksDB, zlib)"));
  }

  @Test
  void theReadmeIsALandingPage() throws IOException {
    long lines =
        DocPages.read(DocPages.ROOT.resolve("README.md")).chars().filter(c -> c == '\n').count();
    assertTrue(lines <= 200, "README.md has " + lines + " lines: move detail into docs/");
  }

  /**
   * Each heading of docs/troubleshooting.md's "Messages nativemem prints" quotes a piece of a
   * message the code still prints (string literals joined as the compiler joins them).
   */
  @Test
  void troubleshootingQuotesMessagesTheCodePrints() throws IOException {
    String page = DocPages.read(DocPages.ROOT.resolve("docs/troubleshooting.md"));
    String ours = page.substring(0, page.indexOf("## Messages the JVM prints"));
    StringBuilder code = new StringBuilder();
    for (String dir : new String[] {"java", "rust/nativemem/src"}) {
      try (Stream<Path> files = Files.walk(DocPages.ROOT.resolve(dir))) {
        for (Path f :
            (Iterable<Path>)
                files.filter(p -> p.toString().matches(".*/src/main/java/.*\\.java|.*\\.rs"))
                    ::iterator) {
          code.append(DocPages.read(f));
        }
      }
    }
    String joined = code.toString().replaceAll("\"\\s*\\+\\s*\"", "").replaceAll("\\\\\n\\s*", "");
    Matcher m = Pattern.compile("(?m)^#### `(.+)`$").matcher(ours);
    List<String> missing = new ArrayList<>();
    int headings = 0;
    while (m.find()) {
      headings++;
      if (!joined.contains(m.group(1))) {
        missing.add(m.group(1));
      }
    }
    // One heading per message the product prints (docs/troubleshooting.md): a floor keeps it so.
    assertTrue(headings >= 150, "headings found: " + headings);
    assertEquals(List.of(), missing, "docs/troubleshooting.md quotes messages the code lacks");
  }

  /** The sources of every test (and CI's script), where a block's name must appear. */
  private static String testSources() throws IOException {
    StringBuilder all = new StringBuilder(DocPages.read(DocPages.ROOT.resolve(".ci/run")));
    for (String dir : new String[] {"tests/src/test/java", "tests-apps", "java"}) {
      try (Stream<Path> files = Files.walk(DocPages.ROOT.resolve(dir))) {
        for (Path f :
            (Iterable<Path>)
                files
                        .filter(p -> p.toString().endsWith(".java"))
                        .filter(p -> p.toString().contains("/src/test/java/"))
                    ::iterator) {
          all.append(DocPages.read(f));
        }
      }
    }
    return all.toString();
  }
}
