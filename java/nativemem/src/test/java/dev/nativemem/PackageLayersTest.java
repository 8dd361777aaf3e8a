package dev.nativemem;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The jar's packages, drawn from their imports, stand in layers with no arrow running back up: the
 * front door {@code dev.nativemem} is used only by the CLI, the agent and the attach channel;
 * {@code internal} stands on {@code base} alone; {@code base} stands on nothing of ours; no two
 * packages import each other, directly or around a circle.
 */
class PackageLayersTest {
  private static final Path SOURCES = Paths.get("src/main/java");
  private static final Pattern IMPORT =
      Pattern.compile(
          "^import (?:static )?(dev\\.nativemem(?:\\.[a-z]+)*)\\.[A-Z]", Pattern.MULTILINE);

  /** Each package of the jar and the packages of ours it imports. */
  private static Map<String, Set<String>> imports() throws IOException {
    Map<String, Set<String>> graph = new TreeMap<>();
    try (Stream<Path> files = Files.walk(SOURCES.resolve("dev/nativemem"))) {
      for (Path file :
          (Iterable<Path>) files.filter(f -> f.toString().endsWith(".java"))::iterator) {
        String pkg = SOURCES.relativize(file.getParent()).toString().replace('/', '.');
        Set<String> used = graph.computeIfAbsent(pkg, p -> new TreeSet<>());
        Matcher m = IMPORT.matcher(new String(Files.readAllBytes(file), StandardCharsets.UTF_8));
        while (m.find()) {
          if (!m.group(1).equals(pkg)) {
            used.add(m.group(1));
          }
        }
      }
    }
    return graph;
  }

  private static boolean within(String pkg, String root) {
    return pkg.equals(root) || pkg.startsWith(root + ".");
  }

  @Test
  void onlyTheFrontDoorsUsersImportIt() throws IOException {
    List<String> offenders = new ArrayList<>();
    for (Map.Entry<String, Set<String>> e : imports().entrySet()) {
      boolean user =
          Stream.of("cli", "agent", "attach")
              .anyMatch(u -> within(e.getKey(), "dev.nativemem." + u));
      if (!user && e.getValue().contains("dev.nativemem")) {
        offenders.add(e.getKey());
      }
    }
    assertEquals(List.of(), offenders, "these packages import the front door from below it");
  }

  @Test
  void baseAndInternalStandOnTheGround() throws IOException {
    List<String> offenders = new ArrayList<>();
    for (Map.Entry<String, Set<String>> e : imports().entrySet()) {
      String floor =
          within(e.getKey(), "dev.nativemem.base")
              ? "dev.nativemem.base"
              : within(e.getKey(), "dev.nativemem.internal") ? "dev.nativemem.internal" : null;
      for (String used : e.getValue()) {
        if (floor != null
            && !within(used, "dev.nativemem.base")
            && !(floor.equals("dev.nativemem.internal") && within(used, floor))) {
          offenders.add(e.getKey() + " -> " + used);
        }
      }
    }
    assertEquals(List.of(), offenders, "base imports only base, internal only itself and base");
  }

  @Test
  void noPackageReachesItself() throws IOException {
    Map<String, Set<String>> graph = imports();
    List<String> circles = new ArrayList<>();
    for (Map.Entry<String, Set<String>> e : graph.entrySet()) {
      for (String used : e.getValue()) {
        if (reaches(graph, used, e.getKey())) {
          circles.add(e.getKey() + " -> " + used);
        }
      }
    }
    assertEquals(List.of(), circles, "these imports close a circle: one of them runs back up");
  }

  private static boolean reaches(Map<String, Set<String>> graph, String from, String to) {
    Set<String> seen = new TreeSet<>();
    List<String> next = new ArrayList<>(List.of(from));
    while (!next.isEmpty()) {
      String pkg = next.remove(next.size() - 1);
      if (pkg.equals(to)) {
        return true;
      }
      if (seen.add(pkg)) {
        next.addAll(graph.getOrDefault(pkg, Set.of()));
      }
    }
    return false;
  }
}
