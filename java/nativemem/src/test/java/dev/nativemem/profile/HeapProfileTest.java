package dev.nativemem.profile;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.nativemem.base.NativeMemoryException;
import dev.nativemem.cli.NativeMemoryCli;
import dev.nativemem.internal.ByteFormat;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** HeapProfile and the {@code report} command on real jemalloc dumps and on bad input. */
class HeapProfileTest {
  @TempDir static Path dir;
  static String missing;

  @BeforeAll
  static void makeDumps() throws Exception {
    missing = HeapDumps.missingTools();
    if (missing == null) {
      HeapDumps.make(dir);
    }
  }

  /**
   * Case 6 of issue 11: a 3 GB {@code symbols.json} ended in an OutOfMemoryError, a FIFO blocked.
   * Either is ignored: the time comes from the dump's mtime.
   */
  @Test
  void aHugeOrFifoSidecarIsNotRead(@TempDir Path tmp) throws Exception {
    for (String kind : new String[] {"huge", "fifo"}) {
      Path dump =
          Files.write(
              tmp.resolve(kind + ".heap"),
              "heap_v2/524288\n  t*: 1: 4096 [0: 0]\n".getBytes(StandardCharsets.UTF_8));
      Path json =
          Files.createDirectory(tmp.resolve(kind + ".heap.symbols")).resolve("symbols.json");
      if (kind.equals("huge")) {
        try (java.io.RandomAccessFile sparse = new java.io.RandomAccessFile(json.toFile(), "rw")) {
          sparse.setLength(3_000_000_000L);
        }
      } else {
        assertEquals(0, new ProcessBuilder("mkfifo", json.toString()).start().waitFor());
      }
      HeapProfile profile = HeapProfile.open(dump);
      assertEquals(Files.getLastModifiedTime(dump).toInstant(), profile.time(), kind);
    }
  }

  private static Path dump(String name) {
    assumeTrue(missing == null, missing);
    return dir.resolve(name);
  }

  @Test
  void headerFiguresComeFromTheDump() throws IOException {
    HeapProfile profile = HeapProfile.open(dump("now.heap"));
    // The header as written by jemalloc, read independently: "heap_v2/512" then "t*: n: b [..]".
    List<String> lines = Files.readAllLines(profile.path());
    assertEquals("heap_v2/512", lines.get(0));
    Matcher totals = Pattern.compile("\\s*t\\*: (\\d+): (\\d+) .*").matcher(lines.get(1));
    assertTrue(totals.matches(), lines.get(1));
    assertEquals(512, profile.sampleIntervalBytes());
    assertEquals(Long.parseLong(totals.group(2)), profile.sampledBytes());
    assertEquals(Long.parseLong(totals.group(1)), profile.sampledObjects());
    assertEquals(Files.getLastModifiedTime(profile.path()).toInstant(), profile.time());
    assertTrue(profile.toString().contains("stacks"), profile.toString());
  }

  @Test
  void toStringShowsTheTotalsAnalyzeReports() {
    HeapProfile profile = HeapProfile.open(dump("now.heap"));
    ProfileReport report = profile.analyze(5);
    // The same sums of the same floating-point terms, added in another order: at most 1 apart.
    assertTrue(Math.abs(report.totalBytes() - profile.inUseBytes()) <= 1, profile.toString());
    assertTrue(Math.abs(report.totalObjects() - profile.inUseObjects()) <= 1, profile.toString());
    // Sampling at 512 bytes makes the unbiased total larger than the header's sampled one.
    assertTrue(profile.inUseBytes() > profile.sampledBytes(), profile.toString());
    String shown = profile.toString();
    assertTrue(shown.contains(ByteFormat.human(report.totalBytes()) + " in use ("), shown);
  }

  @Test
  void topSitesNameThePlantedAllocations() throws Exception {
    ProfileReport report = HeapProfile.open(dump("now.heap")).analyze(10);
    ProfileReport.Site top = report.topFlat().get(0);
    assertEquals("planted_big", top.name(), report.toString());
    assertEquals(256L * 64 * 1024, top.flatBytes());
    assertEquals(256, top.flatObjects());
    assertTrue(report.topFlat().size() <= 10);
    assertTrue(report.warnings().isEmpty(), report.warnings().toString());
    // The total agrees with jeprof on the same file, to the byte.
    assumeTrue(
        HeapDumps.onPath("jeprof"), "jeprof is not installed (apt-get install libjemalloc-dev)");
    String jeprof =
        HeapDumps.run(
            dir,
            false,
            "jeprof",
            "--text",
            "--show_bytes",
            dir.resolve("heap_workload").toString(),
            dir.resolve("now.heap").toString());
    Matcher total = Pattern.compile("Total: (\\d+) B").matcher(jeprof);
    assertTrue(total.find(), jeprof);
    assertEquals(Long.parseLong(total.group(1)), report.totalBytes(), jeprof);
    assertTrue(report.toJson().contains("\"total_bytes\":" + report.totalBytes()));
  }

  @Test
  void diffShowsTheGrowthSinceTheBase() {
    HeapProfile now = HeapProfile.open(dump("now.heap"));
    ProfileReport growth = now.diff(HeapProfile.open(dump("base.heap")));
    assertTrue(growth.isDifference());
    assertEquals("planted_growth", growth.topFlat().get(0).name(), growth.toString());
    assertEquals(128L * 32 * 1024, growth.topFlat().get(0).flatBytes());
    assertEquals(128L * 32 * 1024, growth.totalBytes(), growth.toString());
  }

  @Test
  void writesPrivateFilesAndNeverOverwrites() throws IOException {
    HeapProfile profile = HeapProfile.open(dump("now.heap"));
    Path svg = dir.resolve("flame.svg");
    profile.writeFlameGraph(svg);
    String text = new String(Files.readAllBytes(svg), StandardCharsets.UTF_8);
    assertTrue(text.startsWith("<?xml") && text.contains("planted_big"));
    assertEquals("rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(svg)));
    NativeMemoryException e =
        assertThrows(NativeMemoryException.class, () -> profile.writeFlameGraph(svg));
    assertTrue(e.getMessage().contains("already exists"), e.getMessage());

    Path pprof = dir.resolve("profile.pb.gz");
    profile.writePprof(pprof);
    byte[] gz = Files.readAllBytes(pprof);
    assertEquals((byte) 0x1f, gz[0]);
    assertEquals((byte) 0x8b, gz[1]);

    Path collapsed = dir.resolve("profile.collapsed");
    profile.writeCollapsed(collapsed);
    assertTrue(
        Files.readAllLines(collapsed).stream().anyMatch(l -> l.matches(".*;planted_big \\d+")));
  }

  /** One request gives what the single-output methods give, each from the same analysis. */
  @Test
  void oneRequestMakesEveryOutputTheSingleCallsMake() throws IOException {
    HeapProfile profile = HeapProfile.open(dump("now.heap"));
    Path svg = dir.resolve("request.svg");
    Path pprof = dir.resolve("request.pb.gz");
    ProfileRequest.Result result =
        profile
            .request()
            .top(5)
            .report()
            .write(ProfileRequest.Format.SVG, svg)
            .write(ProfileRequest.Format.PPROF, pprof)
            .render(ProfileRequest.Format.TEXT)
            .run();
    assertEquals(profile.analyze(5).toJson(), result.report().toJson());
    assertEquals(profile.toText(5), result.rendered(ProfileRequest.Format.TEXT));
    assertTrue(result.rendered(ProfileRequest.Format.TEXT).contains("planted_big"));
    Path single = dir.resolve("single.svg");
    profile.writeFlameGraph(single);
    assertEquals(
        new String(Files.readAllBytes(single), StandardCharsets.UTF_8),
        new String(Files.readAllBytes(svg), StandardCharsets.UTF_8));
    for (Path written : new Path[] {svg, pprof}) {
      assertEquals(
          "rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(written)));
    }
    IllegalStateException notAsked =
        assertThrows(
            IllegalStateException.class, () -> result.rendered(ProfileRequest.Format.COLLAPSED));
    assertTrue(notAsked.getMessage().contains("render(COLLAPSED)"), notAsked.getMessage());
    IllegalArgumentException binary =
        assertThrows(
            IllegalArgumentException.class,
            () -> profile.request().render(ProfileRequest.Format.PPROF));
    assertTrue(binary.getMessage().contains("write it to a file"), binary.getMessage());
    // An output that exists fails the request; the outputs asked before it are written.
    Path collapsed = dir.resolve("request.collapsed");
    NativeMemoryException exists =
        assertThrows(
            NativeMemoryException.class,
            () ->
                profile
                    .request()
                    .write(ProfileRequest.Format.COLLAPSED, collapsed)
                    .write(ProfileRequest.Format.SVG, svg)
                    .run());
    assertTrue(exists.getMessage().contains(svg + " already exists"), exists.getMessage());
    assertTrue(Files.isRegularFile(collapsed));
  }

  @Test
  void badInputGetsClearExceptions() throws IOException {
    assertThrows(NullPointerException.class, () -> HeapProfile.open(null));
    NativeMemoryException missingFile =
        assertThrows(NativeMemoryException.class, () -> HeapProfile.open(dir.resolve("nope.heap")));
    assertTrue(missingFile.getMessage().contains("does not exist"), missingFile.getMessage());

    Path text = Files.write(dir.resolve("notes.txt"), "hello\n".getBytes(StandardCharsets.UTF_8));
    IllegalArgumentException garbage =
        assertThrows(IllegalArgumentException.class, () -> HeapProfile.open(text));
    assertTrue(
        garbage.getMessage().contains("not a jemalloc heap_v2 profile"), garbage.getMessage());

    Path empty = Files.createFile(dir.resolve("empty.heap"));
    IllegalArgumentException emptyError =
        assertThrows(IllegalArgumentException.class, () -> HeapProfile.open(empty));
    assertTrue(emptyError.getMessage().contains("is empty"), emptyError.getMessage());

    Path broken =
        Files.write(
            dir.resolve("broken.heap"),
            "heap_v2/512\n@ 0xnothex\n".getBytes(StandardCharsets.UTF_8));
    IllegalArgumentException brokenError =
        assertThrows(IllegalArgumentException.class, () -> HeapProfile.open(broken));
    assertTrue(brokenError.getMessage().contains("line 2"), brokenError.getMessage());
  }

  /** Issue 17: many dumps as one report, against each dump analysed on its own. */
  @Test
  void dumpsMergeWithTheirSumsProcessCountsAndPerProcessTotals(@TempDir Path tmp) throws Exception {
    Path now = dump("now.heap");
    Path base = dump("base.heap");
    long nowTotal = HeapProfile.open(now).analyze().totalBytes();
    long baseTotal = HeapProfile.open(base).analyze().totalBytes();
    ProfileReport merged =
        ProfileRequest.merge(List.of(now, base)).top(100).byProcess().report().run().report();
    assertEquals(2, merged.processCount());
    // Each total truncates its own sum: the merged one is within 1 byte per dump.
    assertTrue(Math.abs(merged.totalBytes() - (nowTotal + baseTotal)) <= 2, merged.toString());
    assertEquals(1, site(merged, "planted_growth").processes(), merged.toString());
    assertEquals(2, site(merged, "planted_big").processes(), merged.toString());
    assertEquals(2, merged.processes().size());
    assertTrue(Math.abs(merged.processes().get(0).totalBytes() - nowTotal) <= 1);
    assertEquals(now.toString(), merged.processes().get(0).dump());

    // A base group: per-process average growth, here one process each, so the plain diff.
    ProfileReport groups =
        ProfileRequest.merge(List.of(now)).bases(List.of(base)).report().run().report();
    ProfileReport diff = HeapProfile.open(now).diff(HeapProfile.open(base));
    assertTrue(groups.isDifference());
    assertTrue(Math.abs(groups.totalBytes() - diff.totalBytes()) <= 1, groups.toString());

    // The CLI: a directory, each process's total, a file of another format passed over by name.
    Path fleet = Files.createDirectory(tmp.resolve("fleet"));
    Files.copy(now, fleet.resolve("a.heap"));
    Files.copy(base, fleet.resolve("b.heap"));
    Files.write(fleet.resolve("c.heap"), "heap profile: 1: 2 [1: 2] @ heap\n".getBytes("UTF-8"));
    Cli cli = Cli.run("analyze", fleet.toString(), "--by-process", "--top", "50");
    assertEquals(0, cli.exit, cli.err);
    assertTrue(cli.out.contains("planted_big  in 2 of 2 processes"), cli.out);
    assertTrue(cli.out.contains("planted_growth  in 1 of 2 processes"), cli.out);
    assertTrue(cli.out.contains("By process (top flat site: "), cli.out);
    assertTrue(cli.out.contains("skipped " + fleet.resolve("c.heap")), cli.out);
  }

  private static ProfileReport.Site site(ProfileReport report, String name) {
    return report.topFlat().stream().filter(s -> s.name().equals(name)).findFirst().orElseThrow();
  }

  @Test
  void truncatedDumpIsAnalysedAndMarkedPartial() throws IOException {
    String whole = new String(Files.readAllBytes(dump("now.heap")), StandardCharsets.UTF_8);
    Path cut = dir.resolve("cut.heap");
    Files.write(
        cut,
        whole.substring(0, whole.indexOf("MAPPED_LIBRARIES")).getBytes(StandardCharsets.UTF_8));
    ProfileReport report = HeapProfile.open(cut).analyze();
    assertFalse(report.warnings().isEmpty());
    assertTrue(report.toString().contains("MAPPED_LIBRARIES"), report.toString());
    assertTrue(report.totalBytes() > 16L << 20, report.toString());
  }

  @Test
  void reportCommandPrintsTopSitesAndWritesFiles() throws Exception {
    Path now = dump("now.heap");
    Cli text = Cli.run("analyze", now.toString(), "--top", "3");
    assertEquals(0, text.exit, text.err);
    assertTrue(text.out.contains("planted_big"), text.out);
    assertTrue(text.out.contains("16.0 MiB"), text.out);

    Cli growth = Cli.run("analyze", now.toString(), "--base", dump("base.heap").toString());
    assertEquals(0, growth.exit, growth.err);
    assertTrue(growth.out.startsWith("Growth since base"), growth.out);

    Cli needsFile = Cli.run("analyze", now.toString(), "--format", "svg");
    assertEquals(2, needsFile.exit, "a missing -o is a usage error");
    assertTrue(needsFile.err.contains("-o FILE"), needsFile.err);

    Path svg = dir.resolve("cli.svg");
    Cli written = Cli.run("analyze", now.toString(), "--format", "svg", "-o", svg.toString());
    assertEquals(0, written.exit, written.err);
    assertTrue(Files.size(svg) > 1000);

    Cli garbage = Cli.run("analyze", dir.resolve("nope.heap").toString());
    assertEquals(1, garbage.exit);
    assertTrue(garbage.err.contains("does not exist"), garbage.err);
  }

  /** The CLI run in this JVM with its output captured. */
  private static final class Cli {
    int exit;
    String out;
    String err;

    static synchronized Cli run(String... args) {
      PrintStream oldOut = System.out;
      PrintStream oldErr = System.err;
      ByteArrayOutputStream out = new ByteArrayOutputStream();
      ByteArrayOutputStream err = new ByteArrayOutputStream();
      Cli cli = new Cli();
      try {
        System.setOut(new PrintStream(out, true, "UTF-8"));
        System.setErr(new PrintStream(err, true, "UTF-8"));
        cli.exit = NativeMemoryCli.run(args);
      } catch (java.io.UnsupportedEncodingException e) {
        throw new IllegalStateException(e);
      } finally {
        System.setOut(oldOut);
        System.setErr(oldErr);
      }
      cli.out = new String(out.toByteArray(), StandardCharsets.UTF_8);
      cli.err = new String(err.toByteArray(), StandardCharsets.UTF_8);
      return cli;
    }
  }
}
