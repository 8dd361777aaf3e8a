package dev.nativemem.tests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.fasterxml.jackson.jr.ob.JSON;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.jar.Attributes;
import java.util.jar.JarEntry;
import java.util.jar.JarOutputStream;
import java.util.jar.Manifest;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Shell blocks of docs/ that start an application with the agent, run by {@code bash} as written:
 * {@code app.jar} is a small jar this test builds (its main makes and ends an Inflater), the
 * documented jar path the built jar, a documented directory or endpoint a temporary or local one.
 */
class DocShellBlocksTest {
  @TempDir Path tmp;

  /** docs/kafka-streams.md's agent line writes the handle report it names at exit. */
  @Test
  void kafkaStreamsAgentLineWritesItsReport() throws Exception {
    Path report = tmp.resolve("handles.json");
    Map<String, String> words = new LinkedHashMap<>();
    words.put("/opt/nativemem-0.1.0.jar", ForkedJvm.JAR.toString());
    words.put("/data/handles.json", report.toString());
    Result r = bash(DocBlocks.block("kafka-streams.md", "kafka-streams-agent"), words);
    assertEquals(0, r.exitCode, r.toString());
    assertTrue(r.output.contains("INFLATER OK"), r.toString());
    Map<String, Object> json = JSON.std.mapFrom(DocPages.read(report));
    assertEquals("nativemem-handle-report/1", json.get("schema"), r.toString());
  }

  /**
   * docs/heap-profiles.md's preload lines, then in the same shell docs/continuous-profiling.md's
   * two agent lines: each application sends its profile to a local stub of the endpoint it names.
   */
  @Test
  void preloadedApplicationsExportTheirProfiles() throws Exception {
    List<String> requests = new CopyOnWriteArrayList<>();
    HttpServer server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
    server.createContext(
        "/",
        exchange -> {
          requests.add(exchange.getRequestMethod() + " " + exchange.getRequestURI().getPath());
          exchange.getRequestBody().readAllBytes();
          exchange.sendResponseHeaders(200, -1);
          exchange.close();
        });
    server.start();
    try {
      Path dir = Files.createDirectory(tmp.resolve("nativemem"));
      String stub = "http://127.0.0.1:" + server.getAddress().getPort();
      Map<String, String> words = new LinkedHashMap<>();
      words.put("/opt/nativemem", dir.toString());
      words.put("nativemem.jar=", ForkedJvm.JAR + "=");
      words.put("http://otel-collector:4318", stub);
      words.put("http://pyroscope:4040", stub);
      String script =
          DocBlocks.block("heap-profiles.md", "heap-profiles-preload")
              + "test -r \"$LD_PRELOAD\" && echo \"PRELOAD=$LD_PRELOAD\"\n"
              + DocBlocks.block("continuous-profiling.md", "continuous-profiling-agent");
      Result r = bash(script, words);
      assertEquals(0, r.exitCode, r.toString());
      assertTrue(
          r.output.contains("PRELOAD=" + dir.toRealPath() + "/libnativemem_jemalloc.so")
              || r.output.contains("PRELOAD=" + dir + "/libnativemem_jemalloc.so"),
          r.toString());
      assertEquals(2, r.output.split("INFLATER OK", -1).length - 1, r.toString());
      String sent = String.join("\n", requests);
      assertTrue(sent.matches("(?s).*POST /v1\\w*/profiles.*"), "OTLP: " + sent + "\n" + r);
      assertTrue(sent.contains("POST /ingest"), "Pyroscope: " + sent + "\n" + r);
    } finally {
      server.stop(0);
    }
  }

  /**
   * docs/watch.md's set-ups: the two shell lines start the application with the watch writing to
   * the documented directory; the Flink line is an option of docs/flink.md's FlinkDeployment.
   */
  @Test
  void watchSetUpsStartTheWatch() throws Exception {
    String block = DocBlocks.block("watch.md", "watch-setups");
    String flink = "env.java.opts.taskmanager: ";
    StringBuilder shell = new StringBuilder();
    String flinkOption = null;
    for (String line : block.split("\n")) {
      if (line.startsWith(flink)) {
        flinkOption = line.substring(flink.length()).trim();
      } else {
        shell.append(line).append('\n');
      }
    }
    assertTrue(flinkOption != null, block);
    // The same agent options as docs/flink.md's deployment, which PodTest runs; paths differ.
    String options = "-javaagent:/\\S+\\.jar=watch=on,watch\\.dir=/\\S+";
    assertTrue(flinkOption.matches(options), flinkOption);
    assertEquals(List.of(flinkOption.replaceAll(options, "")), List.of(""));
    assertTrue(
        DocBlocks.flinkTaskManagerOptions().stream().anyMatch(o -> o.matches(options)),
        DocBlocks.flinkTaskManagerOptions().toString());
    Path incidents = Files.createDirectory(tmp.resolve("incidents"));
    Map<String, String> words = new LinkedHashMap<>();
    words.put("nativemem-0.1.0.jar=", ForkedJvm.JAR + "=");
    words.put("/opt/nativemem.jar", ForkedJvm.JAR.toString());
    words.put("/data/incidents", incidents.toString());
    Result r = bash(shell.toString(), words);
    assertEquals(0, r.exitCode, r.toString());
    assertEquals(2, r.output.split("INFLATER OK", -1).length - 1, r.toString());
    String settings = " dir=" + incidents + ","; // the watch's start note, its settings line
    assertEquals(2, r.output.split(Pattern.quote(settings), -1).length - 1, r.toString());
  }

  /**
   * docs/continuous-profiling.md's pprof lines, then docs/heap-profiles.md's {@code -tagfocus}
   * line, on a {@code /var/dumps/} of two real dumps: two JVMs under the preload allocator with
   * Java frames, each keeping Deflaters made at its own Java line; one dump's sidecar names the
   * host {@code taskmanager-7} (as if copied from it), the other's {@code web-1}.
   */
  @Test
  void goToolPprofReadsTheFleetProfile() throws Exception {
    Path go = OtelCollector.go();
    assumeTrue(go != null, "Go is not installed (go on PATH or /usr/local/go/bin/go)");
    Path dumps = Files.createDirectory(tmp.resolve("dumps"));
    Map<String, String> sites = new LinkedHashMap<>();
    for (String host : List.of("taskmanager-7", "web-1")) {
      Path dump = dumps.resolve(host + ".heap");
      ForkedJvm.Result child =
          new ForkedJvm()
              .classPath(Paths.get(ForkedJvm.TEST_CLASSES))
              .env("LD_PRELOAD", ForkedJvm.OWN_JEMALLOC.toString())
              .main(FleetDumpChild.class.getName(), dump.toString(), host);
      assertEquals(0, child.exitCode, child.toString());
      assertTrue(child.stdout.contains("JAVA_FRAMES true"), child.toString());
      assertTrue(child.stdout.contains("DONE 60"), child.toString());
      Matcher site = Pattern.compile("SITE (\\S+) (\\S+)").matcher(child.stdout);
      assertTrue(site.find(), child.toString());
      sites.put(host, site.group(1) + " " + site.group(2));
      Path symbols = dumps.resolve(host + ".heap.symbols").resolve("symbols.json");
      String sidecar = DocPages.read(symbols);
      String renamed = sidecar.replaceFirst("\"host\": *\"[^\"]*\"", "\"host\": \"" + host + "\"");
      assertTrue(renamed.contains("\"host\": \"" + host + "\""), sidecar);
      Files.write(symbols, renamed.getBytes(StandardCharsets.UTF_8));
    }
    Map<String, String> words = new LinkedHashMap<>();
    words.put("-jar nativemem.jar", "-jar " + ForkedJvm.JAR);
    words.put("/var/dumps/", dumps + "/");
    String script =
        "cd "
            + tmp
            + "\nexport PATH="
            + go.getParent()
            + ":$PATH\n"
            + DocBlocks.block("continuous-profiling.md", "continuous-profiling-pprof")
            + "echo '--- tagfocus'\n"
            + DocBlocks.block("heap-profiles.md", "heap-profiles-fleet-tagfocus");
    Result r = bash(script, words);
    assertEquals(0, r.exitCode, r.toString());
    String[] parts = r.output.split("--- tagfocus\n", 2);
    assertEquals(2, parts.length, r.toString());
    String all = parts[0];
    String focused = parts[1].substring(0, parts[1].indexOf("\n--- script\n"));
    // -top -lines: each planted Java line, as the JVM names it, with the bytes it keeps.
    for (String site : sites.values()) {
      assertTrue(all.contains(site), site + " in:\n" + r);
    }
    // -raw, from its Mappings on: the objects the stacks run through, zlib's among them.
    assertTrue(all.matches("(?s).*\\nMappings\\n.*"), r.toString());
    assertTrue(all.matches("(?s).*\\nMappings\\n.*/lib(z|zip)\\.so.*"), r.toString());
    // -tagfocus=host=taskmanager-7: that process's Java frame only.
    String seven = sites.get("taskmanager-7").split(" ")[0];
    String web = sites.get("web-1").split(" ")[0];
    assertTrue(focused.contains(seven), "the focused host's site in:\n" + focused);
    assertFalse(focused.contains(web), "the other host's site in:\n" + focused);
  }

  /**
   * Runs {@code script} in {@code bash -e}: {@code java -jar app.jar} starts the probe jar, {@code
   * java -jar nativemem-0.1.0.jar} the built jar, {@code java} the JDK running the tests.
   */
  private Result bash(String script, Map<String, String> words) throws Exception {
    for (Map.Entry<String, String> word : words.entrySet()) {
      assertTrue(script.contains(word.getKey()), word.getKey() + " not in:\n" + script);
      script = script.replace(word.getKey(), word.getValue());
    }
    script =
        script
            .replace("-jar app.jar", "-jar " + appJar())
            .replace("-jar nativemem-0.1.0.jar", "-jar " + ForkedJvm.JAR)
            .replaceAll("(?m)(^|\\s)java ", "$1" + ForkedJvm.JAVA + " ");
    Path out = tmp.resolve("bash.out");
    ProcessBuilder builder =
        new ProcessBuilder("bash", "-e", "-c", script)
            .redirectErrorStream(true)
            .redirectOutput(out.toFile());
    builder.environment().remove("LD_PRELOAD");
    builder.environment().remove("MALLOC_CONF");
    builder.environment().remove("JAVA_TOOL_OPTIONS");
    Process process = builder.start();
    if (!process.waitFor(120, TimeUnit.SECONDS)) {
      process.destroyForcibly();
      throw new IllegalStateException("timed out: " + script);
    }
    return new Result(process.exitValue(), DocPages.read(out) + "\n--- script\n" + script);
  }

  /** A jar whose main is {@link InflaterProbe}, the application of the documented lines. */
  private Path appJar() throws IOException {
    Path jar = tmp.resolve("app.jar");
    if (Files.exists(jar)) {
      return jar;
    }
    Manifest manifest = new Manifest();
    manifest.getMainAttributes().put(Attributes.Name.MANIFEST_VERSION, "1.0");
    manifest.getMainAttributes().put(Attributes.Name.MAIN_CLASS, InflaterProbe.class.getName());
    String entry = InflaterProbe.class.getName().replace('.', '/') + ".class";
    try (OutputStream file = Files.newOutputStream(jar);
        JarOutputStream out = new JarOutputStream(file, manifest)) {
      out.putNextEntry(new JarEntry(entry));
      out.write(Files.readAllBytes(Paths.get(ForkedJvm.TEST_CLASSES, entry)));
      out.closeEntry();
    }
    return jar;
  }

  private static final class Result {
    final int exitCode;
    final String output;

    Result(int exitCode, String output) {
      this.exitCode = exitCode;
      this.output = output;
    }

    @Override
    public String toString() {
      return "exit " + exitCode + "\n" + output;
    }
  }
}
