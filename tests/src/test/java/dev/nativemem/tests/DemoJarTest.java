package dev.nativemem.tests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** README.md command (1): the demo jar runs every section, RocksDB included. */
class DemoJarTest {
  private static final Path DEMO_JAR =
      Paths.get(System.getProperty("nativemem.demo.jar", "missing-nativemem-demo.jar"));

  /**
   * With Java frames on, the profile's first lines name the planted workload's own Java lines
   * (where a newcomer would change the code), and no frame is named after a neighbouring symbol
   * (the old `inflateBackEnd+0x13a5?`): code without a symbol shows its object, offset and nearest
   * named caller.
   */
  private static void assertReportLeadsWithTheWorkloadsJavaLines(String stdout) {
    String[] lines = stdout.split("\n");
    int heading = -1;
    for (int i = 0; i < lines.length && heading < 0; i++) {
      if (lines[i].contains("Java lines that own the live native memory")) {
        heading = i;
      }
    }
    assertTrue(heading >= 0, "no Java lines lead the profile:\n" + stdout);
    assertTrue(
        stdout.indexOf("Java lines that own") < stdout.indexOf("analysed in this JVM"),
        "the Java lines come after the native sites:\n" + stdout);
    // The heading, the column names, then the workload's lines, largest first.
    Pattern workloadLine =
        Pattern.compile(
            "\\s+[0-9.]+ [KMG]iB\\s+[0-9.]+%  dev\\.nativemem\\.demo\\."
                + "(ZipWorkload|RocksDbWorkload)\\.run\\((ZipWorkload|RocksDbWorkload)\\.java:[0-9]+\\)");
    assertTrue(
        heading + 2 < lines.length && workloadLine.matcher(lines[heading + 2]).matches(),
        "the first owner is not a workload line:\n" + stdout);
    assertTrue(
        stdout.contains("ZipWorkload.run(ZipWorkload.java:"),
        "the zip workload's 2000 open streams are not among the owners:\n" + stdout);
    Matcher guess = Pattern.compile("\\+0x[0-9a-f]+\\?").matcher(stdout);
    assertFalse(guess.find(), "a neighbour's name with a '?' is shown:\n" + stdout);
  }

  @Test
  void demoJarRunsEverySectionWithRocksDb(@TempDir Path dir) throws Exception {
    assertTrue(Files.isRegularFile(DEMO_JAR), DEMO_JAR + " is missing: run mvn package first");
    // Earlier default-named dumps: dumpProfile() keeps the newest -Dnativemem.profile.keep.
    for (int i = 0; i < 5; i++) {
      Files.createFile(dir.resolve("nativemem-1-2020010" + i + "T000000.000Z.heap"));
    }
    Files.createFile(dir.resolve("mine.heap"));
    ForkedJvm.Result r =
        new ForkedJvm()
            .jvmArg("-Dnativemem.profile.dir=" + dir, "-Dnativemem.profile.keep=3")
            .jar(DEMO_JAR, "demo");
    assertEquals(0, r.exitCode, r.toString());
    // Allocator truth and the breakdown.
    assertTrue(r.stdout.contains("Where the memory is (nativemem breakdown)"), r.stdout);
    // The three incidents, reproduced with the agent in a child JVM: 3 restarts, 32 MiB caches.
    assertTrue(
        r.stdout.contains("=> 3 block caches closed in Java but alive natively: 96.0 MiB"),
        r.stdout);
    assertTrue(r.stdout.contains("3 leaked Statistics, created at"), r.stdout);
    assertTrue(r.stdout.contains("  no leak: HandleScope 'fixed'"), r.stdout);
    // The heap profile of a RocksDB workload, analysed in-process, with a flame graph.
    assertTrue(r.stdout.contains("RocksDB: 100000 puts"), r.stdout);
    Matcher svg = Pattern.compile("live native memory: (\\S+\\.svg)").matcher(r.stdout);
    assertTrue(svg.find(), r.stdout);
    assertTrue(Files.size(Paths.get(svg.group(1))) > 1000, svg.group(1));
    assertTrue(r.stdout.matches("(?s).*analysed in this JVM.*rocksdb::.*"), r.stdout);
    assertReportLeadsWithTheWorkloadsJavaLines(r.stdout);
    try (java.util.stream.Stream<Path> files = Files.list(dir)) {
      java.util.List<String> heaps =
          files
              .map(p -> p.getFileName().toString())
              .filter(n -> n.endsWith(".heap"))
              .sorted()
              .collect(java.util.stream.Collectors.toList());
      assertEquals(4, heaps.size(), heaps.toString()); // mine.heap + the newest 3 default-named
      assertTrue(heaps.contains("mine.heap"), heaps.toString());
      assertTrue(heaps.contains("nativemem-1-20200104T000000.000Z.heap"), heaps.toString());
      assertTrue(heaps.contains("nativemem-1-20200103T000000.000Z.heap"), heaps.toString());
    }
  }
}
