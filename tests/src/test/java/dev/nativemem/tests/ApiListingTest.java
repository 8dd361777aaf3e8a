package dev.nativemem.tests;

import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The public API of each published module is locked: {@code api/MODULE.txt} lists it (types,
 * members, signatures), and a jar whose API differs fails here with the difference and the command
 * that rewrites the file, so every change to the API is deliberate and shows in review.
 */
class ApiListingTest {
  private static final Path ROOT = Paths.get(System.getProperty("user.dir")).getParent();
  private static final String VERSION = "0.1.0";

  @ParameterizedTest
  @ValueSource(
      strings = {"nativemem", "nativemem-junit", "nativemem-micrometer", "nativemem-flink"})
  void theJarsApiIsTheCommittedListing(String module) throws Exception {
    Path jar = ROOT.resolve("java/" + module + "/target/" + module + "-" + VERSION + ".jar");
    assertTrue(
        Files.isRegularFile(jar), jar + " is missing: build it (mvn -B -q install -DskipTests)");
    Path committed = ROOT.resolve("api/" + module + ".txt");
    assertTrue(Files.isRegularFile(committed), committed + " is missing: " + regenerate());
    String expected = Files.readString(committed, StandardCharsets.UTF_8);
    String actual = listing(jar);
    if (!expected.equals(actual)) {
      fail(
          "the public API of "
              + module
              + " differs from "
              + ROOT.relativize(committed)
              + " (- in the file, + in the jar):\n"
              + diff(expected, actual)
              + "\nIf the change is deliberate: "
              + regenerate());
    }
  }

  private static String regenerate() {
    return "cd " + ROOT + " && java build/ApiListing.java --write " + VERSION;
  }

  /** The listing of {@code jar} by the same tool that writes the committed files. */
  private static String listing(Path jar) throws IOException, InterruptedException {
    Path java = Paths.get(System.getProperty("java.home"), "bin", "java");
    Path out = Files.createTempFile("api-listing", ".txt");
    try {
      Process p =
          new ProcessBuilder(
                  java.toString(), ROOT.resolve("build/ApiListing.java").toString(), jar.toString())
              .redirectOutput(out.toFile())
              .redirectErrorStream(false)
              .redirectError(ProcessBuilder.Redirect.INHERIT)
              .start();
      if (!p.waitFor(2, TimeUnit.MINUTES)) {
        p.destroyForcibly();
        fail("build/ApiListing.java did not finish within 2 minutes");
      }
      assertTrue(p.exitValue() == 0, "build/ApiListing.java exited with " + p.exitValue());
      return Files.readString(out, StandardCharsets.UTF_8);
    } finally {
      Files.deleteIfExists(out);
    }
  }

  /** Lines only in {@code expected} (-) and only in {@code actual} (+), in order. */
  static String diff(String expected, String actual) {
    List<String> a = List.of(expected.split("\n", -1));
    List<String> b = List.of(actual.split("\n", -1));
    int[][] lcs = new int[a.size() + 1][b.size() + 1];
    for (int i = a.size() - 1; i >= 0; i--) {
      for (int j = b.size() - 1; j >= 0; j--) {
        lcs[i][j] =
            a.get(i).equals(b.get(j))
                ? lcs[i + 1][j + 1] + 1
                : Math.max(lcs[i + 1][j], lcs[i][j + 1]);
      }
    }
    List<String> out = new ArrayList<>();
    int i = 0;
    int j = 0;
    while (i < a.size() || j < b.size()) {
      if (i < a.size() && j < b.size() && a.get(i).equals(b.get(j))) {
        i++;
        j++;
      } else if (j < b.size() && (i == a.size() || lcs[i][j + 1] >= lcs[i + 1][j])) {
        out.add("+ " + b.get(j++));
      } else {
        out.add("- " + a.get(i++));
      }
    }
    return String.join("\n", out);
  }
}
