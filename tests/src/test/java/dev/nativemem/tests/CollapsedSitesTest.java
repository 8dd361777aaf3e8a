package dev.nativemem.tests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * bench/CollapsedSites.java, which bench/profiler-findings.sh uses to read the bytes each profiler
 * attributes to the planted Java methods, on the real collapsed files of one run of that benchmark
 * (tests/src/test/resources/collapsed/): async-profiler 4.2's {@code jfrconv --nativemem --leak
 * [--total] --lines -o collapsed} and nativemem's {@code analyze --format collapsed} (under
 * jemalloc, and under the import-rewriting engine). The expected sums were read from the same files
 * with awk; the sample count of the 1 MiB site is also the planted truth (each 1 MiB block is at
 * least the 512 KiB interval, so async-profiler samples all 64).
 */
class CollapsedSitesTest {
  private static final Path ROOT = Paths.get(System.getProperty("user.dir")).getParent();
  private static final String JAVA =
      Paths.get(System.getProperty("java.home"), "bin", "java").toString();
  private static final Path FILES = ROOT.resolve("tests/src/test/resources/collapsed");
  private static final String[] SITES = {
    "PlantedWorkload.plantLarge", "PlantedWorkload.plantSmall", "PlantedWorkload.churn"
  };

  @Test
  void asyncProfilerLeakBytesPerPlantedMethod() throws Exception {
    assertEquals(
        List.of(
            "SITE PlantedWorkload.plantLarge 67108864 1 67",
            "SITE PlantedWorkload.plantSmall 49152 1 73",
            "SITE PlantedWorkload.churn 0 0 -"),
        sites(FILES.resolve("async-profiler-leak.collapsed"), SITES));
  }

  @Test
  void asyncProfilerLeakSamplesPerPlantedMethod() throws Exception {
    List<String> out = sites(FILES.resolve("async-profiler-leak-samples.collapsed"), SITES);
    assertEquals("SITE PlantedWorkload.plantLarge 64 1 67", out.get(0), "all 64 blocks sampled");
    assertEquals("SITE PlantedWorkload.plantSmall 96 1 73", out.get(1));
  }

  @Test
  void nativememBytesPerPlantedMethod() throws Exception {
    assertEquals(
        List.of(
            "SITE PlantedWorkload.plantLarge 67933986 1 67",
            "SITE PlantedWorkload.plantSmall 54552580 1 73",
            "SITE PlantedWorkload.churn 0 0 -"),
        sites(FILES.resolve("nativemem.collapsed"), SITES));
  }

  /**
   * The import-rewriting engine's dump (plain glibc), from a later run: the source's lines moved.
   */
  @Test
  void importRewritingBytesPerPlantedMethod() throws Exception {
    assertEquals(
        List.of(
            "SITE PlantedWorkload.plantLarge 69123709 1 78",
            "SITE PlantedWorkload.plantSmall 41963523 1 84",
            "SITE PlantedWorkload.churn 0 0 -"),
        sites(FILES.resolve("nativemem-import-rewriting.collapsed"), SITES));
  }

  @Test
  void aStackCountsOnceAndAFrameMayHoldSpaces(@TempDir Path dir) throws Exception {
    Path file = dir.resolve("x.collapsed");
    Files.write(
        file,
        Arrays.asList(
            "a.B.run:3_[j];a/B.run:5_[0];malloc 100",
            "[Java frames unavailable: gc];a.B.run(B.java:9);os::malloc 7",
            "a.B.runner(B.java:1);malloc 1000",
            ""),
        StandardCharsets.UTF_8);
    assertEquals(List.of("SITE a.B.run 107 2 3,5,9"), sites(file, "a.B.run"));
  }

  @Test
  void aLineWithoutAValueIsAnErrorNamingIt(@TempDir Path dir) throws Exception {
    Path file = dir.resolve("bad.collapsed");
    Files.write(file, Arrays.asList("a;b 1", "a;b x"), StandardCharsets.UTF_8);
    Result r = run(file, "a");
    assertNotEquals(0, r.exit);
    assertTrue(r.output.contains("bad.collapsed:2: no integer value"), r.output);
  }

  private static List<String> sites(Path file, String... methods) throws Exception {
    Result r = run(file, methods);
    assertEquals(0, r.exit, r.output);
    List<String> lines = new ArrayList<>(Arrays.asList(r.output.split("\n")));
    lines.removeIf(String::isEmpty);
    return lines;
  }

  private static Result run(Path file, String... methods) throws IOException, InterruptedException {
    List<String> command = new ArrayList<>();
    command.add(JAVA);
    command.add(ROOT.resolve("bench/CollapsedSites.java").toString());
    command.add(file.toString());
    command.addAll(Arrays.asList(methods));
    Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
    String output = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    return new Result(p.waitFor(), output);
  }

  private static final class Result {
    final int exit;
    final String output;

    Result(int exit, String output) {
      this.exit = exit;
      this.output = output;
    }
  }
}
