package dev.nativemem.tests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import org.yaml.snakeyaml.Yaml;

/**
 * The blocks of docs/ that tests run, found by the comment {@code <!-- tested: NAME -->} on the
 * line before the block's opening fence: what a user copies is what the tests run.
 */
final class DocBlocks {
  static final Path DOCS = Paths.get(System.getProperty("user.dir")).getParent().resolve("docs");

  /** The part of a documented log command that a test replaces by its own log. */
  static final String LOGS = "kubectl logs";

  private DocBlocks() {}

  /** The fenced block after {@code <!-- tested: name -->} in {@code docs/<page>}. */
  static String block(String page, String name) throws IOException {
    String text = new String(Files.readAllBytes(DOCS.resolve(page)), StandardCharsets.UTF_8);
    String marker = "<!-- tested: " + name + " -->\n";
    int at = text.indexOf(marker);
    assertTrue(at >= 0, "docs/" + page + " has no block marked " + marker.trim());
    assertEquals(at, text.lastIndexOf(marker), "one block marked " + name + " in " + page);
    int fence = at + marker.length();
    assertTrue(text.startsWith("```", fence), "a fenced block follows " + marker.trim());
    int start = text.indexOf('\n', fence) + 1;
    return text.substring(start, text.indexOf("\n```", start) + 1);
  }

  /** The YAML documents of a marked block. */
  static List<Map<String, Object>> yaml(String page, String name) throws IOException {
    List<Map<String, Object>> docs = new ArrayList<>();
    for (Object doc : new Yaml().loadAll(block(page, name))) {
      docs.add(map(doc));
    }
    return docs;
  }

  /** docs/flink.md's FlinkDeployment and the claim it mounts. */
  static List<Map<String, Object>> flinkDeployment() throws IOException {
    return yaml("flink.md", "flink-deployment");
  }

  /** {@code env.java.opts.taskmanager} of docs/flink.md's FlinkDeployment, one option a word. */
  static List<String> flinkTaskManagerOptions() throws IOException {
    Map<String, Object> config =
        map(map(flinkDeployment().get(0).get("spec")).get("flinkConfiguration"));
    String options = (String) config.get("env.java.opts.taskmanager");
    assertNotNull(options, "env.java.opts.taskmanager in docs/flink.md");
    return Arrays.asList(options.trim().split("\\s+"));
  }

  /** docs/spring-boot.md's Deployment. */
  static List<Map<String, Object>> springBootDeployment() throws IOException {
    return yaml("spring-boot.md", "spring-boot-deployment");
  }

  /** {@code JAVA_TOOL_OPTIONS} of docs/spring-boot.md's Deployment. */
  static String springBootJavaToolOptions() throws IOException {
    for (Map<String, Object> env :
        list(container(springBootDeployment().get(0), null).get("env"))) {
      if ("JAVA_TOOL_OPTIONS".equals(env.get("name"))) {
        return (String) env.get("value");
      }
    }
    throw new AssertionError("no JAVA_TOOL_OPTIONS in docs/spring-boot.md's Deployment");
  }

  /** docs/spring-boot.md's attach command: the words after {@code kubectl exec <pod> --}. */
  static List<String> springBootAttachCommand() throws IOException {
    String line = block("spring-boot.md", "spring-boot-attach").trim();
    assertTrue(line.startsWith("kubectl exec <pod> -- "), line);
    return Arrays.asList(line.substring("kubectl exec <pod> -- ".length()).split("\\s+"));
  }

  /** docs/flink.md's command that takes the JSON line out of a TaskManager's log. */
  static String logJsonCommand() throws IOException {
    String line = block("flink.md", "log-json").trim();
    assertTrue(line.startsWith(LOGS + " "), line);
    return LOGS + " " + line.substring(line.indexOf('|'));
  }

  /** docs/playbook-oomkilled.md's Dockerfile: the {@code JAVA_TOOL_OPTIONS} it sets, split. */
  static List<String> playbookJavaToolOptions() throws IOException {
    String prefix = "ENV JAVA_TOOL_OPTIONS=\"";
    for (String line : block("playbook-oomkilled.md", "playbook-dockerfile").split("\n")) {
      if (line.startsWith(prefix) && line.endsWith("\"")) {
        return Arrays.asList(
            line.substring(prefix.length(), line.length() - 1).trim().split("\\s+"));
      }
    }
    throw new AssertionError("the playbook's Dockerfile sets no JAVA_TOOL_OPTIONS");
  }

  /**
   * docs/playbook-oomkilled.md's commands that read the verdict from a log, each with its {@code
   * kubectl logs [--previous] <pod>} replaced by {@code cat <log>} and its comment dropped.
   */
  static List<String> playbookLogCommands(Path log) throws IOException {
    List<String> commands = new ArrayList<>();
    for (String line : block("playbook-oomkilled.md", "playbook-logs").split("\n")) {
      String command = line.replaceAll("\\s+#.*$", "").trim();
      assertTrue(command.matches(LOGS + " (--previous )?<[a-z-]+> \\|.*"), command);
      commands.add("cat " + log + command.substring(command.indexOf(" |")));
    }
    return commands;
  }

  /** The pod spec of a Deployment or of a FlinkDeployment's TaskManager pod template. */
  static Map<String, Object> podSpec(Map<String, Object> resource) {
    Map<String, Object> spec = map(resource.get("spec"));
    if ("FlinkDeployment".equals(resource.get("kind"))) {
      return map(map(map(spec.get("taskManager")).get("podTemplate")).get("spec"));
    }
    return map(map(map(spec.get("template"))).get("spec"));
  }

  /** The container named {@code name} (or the first one) of a resource's pod spec. */
  static Map<String, Object> container(Map<String, Object> resource, String name) {
    for (Map<String, Object> c : list(podSpec(resource).get("containers"))) {
      if (name == null || name.equals(c.get("name"))) {
        return c;
      }
    }
    throw new AssertionError("no container " + name + " in " + resource);
  }

  @SuppressWarnings("unchecked")
  static Map<String, Object> map(Object value) {
    assertTrue(value instanceof Map, "a mapping: " + value);
    return (Map<String, Object>) value;
  }

  @SuppressWarnings("unchecked")
  static List<Map<String, Object>> list(Object value) {
    assertTrue(value instanceof List, "a list: " + value);
    return (List<Map<String, Object>>) value;
  }
}
