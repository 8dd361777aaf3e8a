package dev.nativemem.tests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.jr.ob.JSON;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The {@code java -jar nativemem-0.1.0.jar ...} commands of README.md and docs/, run as written
 * against the built jar: a placeholder pid is a live JVM's, a documented path a temporary one.
 */
class DocCommandsTest {
  private static final String COMMAND = "java -jar nativemem-0.1.0.jar ";
  private static final Pattern WORD = Pattern.compile("'([^']*)'|\"([^\"]*)\"|(\\S+)");

  @TempDir Path tmp;

  /** Commands that need nothing but the jar: each exits 0 and prints something. */
  @Test
  void commandsOfTheJarAloneRun() throws Exception {
    String[][] blocks = {
      {"docs/getting-started.md", "getting-started-cli"},
      {"docs/memory.md", "memory-cli"},
      {"docs/kafka-streams.md", "kafka-known-leaks"},
    };
    for (String[] block : blocks) {
      for (List<String> args : commands(block[0], block[1])) {
        run(args);
      }
    }
  }

  @Test
  void envPrintsThePreloadLines() throws Exception {
    List<List<String>> commands = commands("docs/getting-started.md", "getting-started-env");
    assertEquals(1, commands.size(), commands.toString());
    Path dir = Files.createDirectory(tmp.resolve("nativemem"));
    List<String> args = replace(commands.get(0), "/opt/nativemem", dir.toString());
    ForkedJvm.Result r = new ForkedJvm().cli(args.toArray(new String[0]));
    assertEquals(0, r.exitCode, r.toString());
    assertTrue(r.stdout.contains("LD_PRELOAD=" + dir), r.stdout);
    assertTrue(r.stdout.contains("ENV LD_PRELOAD="), r.stdout);
  }

  /**
   * docs/getting-started.md's demo command is the demo jar DemoJarTest runs (and README.md's
   * command (1), which CI runs): the same path, from the checkout.
   */
  @Test
  void theDemoCommandIsTheDemoJarsTestedOne() throws Exception {
    String shown = null;
    for (DocPages.Block block : DocPages.blocks(DocPages.ROOT.resolve("docs/getting-started.md"))) {
      if ("getting-started-demo".equals(block.tested)) {
        shown = block.body.trim();
      }
    }
    Path demoJar = Path.of(System.getProperty("nativemem.demo.jar")).normalize();
    assertEquals("java -jar " + DocPages.ROOT.relativize(demoJar) + " demo", shown);
    String readme = DocPages.read(DocPages.ROOT.resolve("README.md"));
    assertTrue(readme.contains("&& " + shown + "\n"), "README.md's command (1)");
  }

  /**
   * A newcomer reads README.md: its "Build from source" block holds the two commands, and CI takes
   * them from there (the extraction of .ci/run itself, run on the checkout, gives README's lines).
   */
  @Test
  void ciRunsTheTwoCommandsOfReadme() throws Exception {
    List<String> shown = new ArrayList<>();
    for (DocPages.Block block : DocPages.blocks(DocPages.ROOT.resolve("README.md"))) {
      if ("ci-quick-start".equals(block.tested)) {
        List<String> lines = List.of(block.body.split("\n"));
        for (String marker : List.of("# (1)", "# (2)")) {
          int at = -1;
          for (int i = 0; i < lines.size(); i++) {
            if (lines.get(i).startsWith(marker)) {
              at = i;
            }
          }
          assertTrue(at >= 0 && at + 1 < lines.size(), "README.md's block lacks " + marker);
          shown.add(lines.get(at + 1));
        }
      }
    }
    assertEquals(2, shown.size(), "README.md has one ci-quick-start block with (1) and (2)");
    String ciRun = DocPages.read(DocPages.ROOT.resolve(".ci/run"));
    Matcher function =
        Pattern.compile("(?ms)^quick_start_command\\(\\) \\{.*?^\\}$").matcher(ciRun);
    assertTrue(function.find(), ".ci/run defines quick_start_command");
    for (int n = 1; n <= 2; n++) {
      Process bash =
          new ProcessBuilder("bash", "-c", function.group() + "\nquick_start_command " + n)
              .directory(DocPages.ROOT.toFile())
              .redirectErrorStream(true)
              .start();
      String out = new String(bash.getInputStream().readAllBytes()).trim();
      assertEquals(0, bash.waitFor());
      assertEquals(shown.get(n - 1), out, ".ci/run's command (" + n + ") is README.md's");
    }
  }

  /**
   * README's and docs/cli.md's attach commands against one running JVM under the jar's jemalloc,
   * docs/watch.md's incident commands on a bundle it writes, then docs/heap-profiles.md's report
   * commands on the dumps they wrote.
   */
  @Test
  void attachCommandsRunAgainstALiveJvm() throws Exception {
    List<List<String>> commands = new ArrayList<>(commands("README.md", "readme-attach"));
    commands.addAll(commands("docs/cli.md", "cli-attach"));
    try (AttachTargetProcess target =
        new AttachTargetProcess(
            List.of(ForkedJvm.TEST_CLASSES), "LD_PRELOAD", ForkedJvm.OWN_JEMALLOC.toString())) {
      String pid = Long.toString(target.pid);
      for (List<String> command : commands) {
        List<String> args = replace(replace(command, "<pid>", pid), "$PID", pid);
        args = replace(args, "/tmp/app.heap", tmp.resolve("app.heap").toString());
        run(args);
        if (args.containsAll(List.of("profile", "start"))) {
          target.send("open 2000", "OPENED"); // zlib's buffers: what the dump then samples
        }
      }
      assertTrue(Files.isRegularFile(tmp.resolve("app.heap")), "the documented dump was written");
      // The documented --base dump: the same dump stands in for one taken an hour earlier.
      Files.copy(tmp.resolve("app.heap"), tmp.resolve("app-1h-ago.heap"));

      // Open handles since tracking began: docs/json-reference.md's site and open-handle keys.
      target.send("open 20", "OPENED");
      ForkedJvm.Result handles = new ForkedJvm().cli("attach", pid, "handles", "--json");
      assertEquals(0, handles.exitCode, handles.toString());
      Map<String, Object> attached = JSON.std.mapFrom(handles.stdout.trim());
      JsonReference.assertDocuments("attach-handles", List.of(attached));
      @SuppressWarnings("unchecked")
      Map<String, Object> report = (Map<String, Object>) attached.get("report");
      JsonReference.assertDocuments("handle-report", List.of(report));
      JsonReference.assertDocuments("handle-report.sites", (List<?>) report.get("sites"));
      JsonReference.assertDocuments(
          "handle-report.oldest_open", (List<?>) report.get("oldest_open"));

      // docs/watch.md's incident commands on a bundle this JVM writes.
      Path incidents = Files.createDirectory(tmp.resolve("incidents"));
      run(List.of("attach", pid, "watch", "start", "--dir", incidents.toString()));
      ForkedJvm.Result captured = new ForkedJvm().cli("attach", pid, "incident");
      assertEquals(0, captured.exitCode, captured.toString());
      String bundle = captured.stdout.trim();
      Map<String, Object> manifest =
          JSON.std.mapFrom(DocPages.read(Path.of(bundle, "manifest.json")));
      JsonReference.assertDocuments("incident-manifest", List.of(manifest));
      Map<String, Object> timeline =
          JSON.std.mapFrom(DocPages.read(Path.of(bundle, "timeline.json")));
      JsonReference.assertDocuments("incident-timeline.samples", (List<?>) timeline.get("samples"));
      for (List<String> command : commands("docs/watch.md", "watch-incident")) {
        List<String> args = new ArrayList<>();
        for (String word : command) {
          args.add(word.matches(".*/nativemem-incident-[^/]*|BUNDLE") ? bundle : word);
        }
        run(replace(args, "/tmp/incident.html", tmp.resolve("incident.html").toString()));
      }
      assertTrue(Files.isRegularFile(tmp.resolve("incident.html")), "the documented page");
    }
    // docs/heap-profiles.md's report commands on those two dumps, then on them as a fleet.
    for (List<String> command : commands("docs/heap-profiles.md", "heap-profiles-report")) {
      List<String> args = replace(command, "/tmp/", tmp + "/");
      args = replace(args, "app.svg", tmp.resolve("app.svg").toString());
      run(args);
    }
    Path fleet = Files.createDirectory(tmp.resolve("dumps"));
    Files.copy(tmp.resolve("app.heap"), fleet.resolve("a.heap"));
    Files.copy(tmp.resolve("app-1h-ago.heap"), fleet.resolve("b.heap"));
    for (List<String> command : commands("docs/heap-profiles.md", "heap-profiles-fleet")) {
      List<String> args = replace(command, "/var/dumps/11h", fleet.toString());
      args = replace(args, "/var/dumps/10h", fleet.toString());
      args = replace(args, "/var/dumps/", fleet + "/");
      run(replace(args, "fleet.pb.gz", tmp.resolve("fleet.pb.gz").toString()));
    }
    assertTrue(Files.size(tmp.resolve("fleet.pb.gz")) > 0, "the documented pprof file");
  }

  /** Runs a documented command: exit 0, and its output on stdout or in the file it names. */
  private static void run(List<String> args) throws Exception {
    ForkedJvm.Result r = new ForkedJvm().cli(args.toArray(new String[0]));
    assertEquals(0, r.exitCode, args + ": " + r);
    int out = Math.max(args.indexOf("-o"), args.indexOf("--out"));
    if (out >= 0 && !args.contains("attach")) {
      Path file = Path.of(args.get(out + 1));
      assertTrue(Files.isRegularFile(file) && Files.size(file) > 0, args + ": " + r);
    } else {
      assertFalse(r.stdout.isBlank(), args + ": " + r);
    }
  }

  /** docs/cli.md shows the usage the jar prints, so a renamed command or option shows there. */
  @Test
  void cliPageShowsTheUsageTheJarPrints() throws Exception {
    String shown = null;
    for (DocPages.Block block : DocPages.blocks(DocPages.ROOT.resolve("docs/cli.md"))) {
      if ("cli-help".equals(block.tested)) {
        shown = block.body;
      }
    }
    ForkedJvm.Result r = new ForkedJvm().cli("help");
    assertEquals(0, r.exitCode, r.toString());
    // The usage names the jar file as it is named where it runs (its first line and its last):
    // compared as nativemem.jar.
    String jarName = "(java -jar )[^\\s']+\\.jar";
    assertEquals(
        r.stdout.replaceAll(jarName, "$1nativemem.jar"),
        shown == null ? null : shown.replaceAll(jarName, "$1nativemem.jar"),
        "docs/cli.md's usage: paste 'java -jar nativemem.jar help'");
  }

  /** docs/handles.md's agent line, its application replaced by one that ends an Inflater. */
  @Test
  void theAgentLineWritesItsReport() throws Exception {
    List<String> words = new ArrayList<>();
    for (DocPages.Block block : DocPages.blocks(DocPages.ROOT.resolve("docs/handles.md"))) {
      if ("handles-agent".equals(block.tested)) {
        words.addAll(List.of(block.body.trim().split("\\s+")));
      }
    }
    assertEquals("java", words.get(0), words.toString());
    assertEquals(List.of("-jar", "app.jar"), words.subList(words.size() - 2, words.size()));
    String agent = words.get(1);
    assertTrue(agent.startsWith("-javaagent:nativemem-0.1.0.jar="), agent);
    Path report = tmp.resolve("handles.json");
    agent =
        agent
            .replace("nativemem-0.1.0.jar", ForkedJvm.JAR.toString())
            .replace("report=handles.json", "report=" + report);
    ForkedJvm.Result r =
        new ForkedJvm()
            .withTestClasses()
            .jvmArg(agent)
            .mainWithoutJar(InflaterProbe.class.getName());
    assertEquals(0, r.exitCode, r.toString());
    Map<String, Object> json = JSON.std.mapFrom(DocPages.read(report));
    assertEquals("nativemem-handle-report/1", json.get("schema"), r.toString());
    JsonReference.assertDocuments("handle-report", List.of(json));
    JsonReference.assertDocuments("handle-report.kinds", (List<?>) json.get("kinds"));
  }

  /** README's Flink line is docs/flink.md's FlinkDeployment's, which PodTest runs. */
  @Test
  void readmesFlinkLineIsTheDeploymentsOptions() throws Exception {
    String line = null;
    for (DocPages.Block block : DocPages.blocks(DocPages.ROOT.resolve("README.md"))) {
      if ("readme-flink".equals(block.tested)) {
        line = block.body.trim();
      }
    }
    String key = "env.java.opts.taskmanager: ";
    assertTrue(line != null && line.startsWith(key), "README's Flink line: " + line);
    assertEquals(
        DocBlocks.flinkTaskManagerOptions(),
        List.of(line.substring(key.length()).trim().split("\\s+")));
  }

  /** docs/configuration.md's second table lists the settings the command lists, in its order. */
  @Test
  void configurationPageListsEverySetting() throws Exception {
    ForkedJvm.Result r = new ForkedJvm().cli("settings", "--json");
    assertEquals(0, r.exitCode, r.toString());
    List<String> printed = new ArrayList<>();
    for (Object setting : (List<?>) JSON.std.mapFrom(r.stdout.trim()).get("settings")) {
      printed.add((String) ((Map<?, ?>) setting).get("property"));
    }
    String page = DocPages.read(DocPages.ROOT.resolve("docs/configuration.md"));
    String begin = "<!-- settings elsewhere: begin -->\n";
    int from = page.indexOf(begin);
    int to = page.indexOf("<!-- settings elsewhere: end -->");
    assertTrue(from >= 0 && to > from, "docs/configuration.md lacks its second table's markers");
    List<String> documented = new ArrayList<>();
    Matcher m =
        Pattern.compile("(?m)^\\| `(nativemem\\.[^`]+)` \\|").matcher(page.substring(from, to));
    while (m.find()) {
      documented.add(m.group(1));
    }
    assertEquals(printed, documented, "docs/configuration.md, 'The same settings elsewhere'");

    ForkedJvm.Result markdown = new ForkedJvm().cli("settings", "--markdown");
    assertEquals(0, markdown.exitCode, markdown.toString());
    assertTrue(
        page.contains(
            "<!-- settings table: begin -->\n" + markdown.stdout + "<!-- settings table: end -->"),
        "docs/configuration.md's settings table differs from 'settings --markdown'");
  }

  /**
   * The commands of a block marked {@code <!-- tested: name -->}: each line's words after {@code
   * java -jar nativemem-0.1.0.jar}, quotes removed, a trailing comment dropped.
   */
  static List<List<String>> commands(String page, String name) throws IOException {
    List<List<String>> commands = new ArrayList<>();
    for (DocPages.Block block : DocPages.blocks(DocPages.ROOT.resolve(page))) {
      if (!name.equals(block.tested)) {
        continue;
      }
      for (String line : block.body.split("\n")) {
        String command = line.replaceAll("\\s+#.*$", "").trim();
        if (command.isEmpty() || command.startsWith("#")) {
          continue;
        }
        assertTrue(command.startsWith(COMMAND), page + ", " + name + ": " + command);
        List<String> words = new ArrayList<>();
        Matcher m = WORD.matcher(command.substring(COMMAND.length()));
        while (m.find()) {
          words.add(m.group(1) != null ? m.group(1) : m.group(2) != null ? m.group(2) : m.group(3));
        }
        commands.add(words);
      }
    }
    assertFalse(commands.isEmpty(), page + " has no commands in a block marked tested: " + name);
    return commands;
  }

  private static List<String> replace(List<String> words, String from, String to) {
    List<String> out = new ArrayList<>();
    for (String word : words) {
      out.add(word.replace(from, to));
    }
    return out;
  }
}
