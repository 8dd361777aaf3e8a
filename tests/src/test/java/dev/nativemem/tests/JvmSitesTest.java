package dev.nativemem.tests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import java.util.zip.GZIPInputStream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The JVM's own native memory, sampled from its first allocation: every byte HotSpot allocates goes
 * through its malloc wrappers ({@code os::malloc}, mostly under {@code AllocateHeap} or an arena's
 * chunk pool), which jeprof shows as the top site. In every output of ours they are allocator
 * frames: the site is the JVM code that called them, and the total is still jeprof's.
 */
class JvmSitesTest {
  /** HotSpot's wrappers as jeprof and we name them (short names). */
  private static final List<String> WRAPPERS =
      List.of(
          "os::malloc",
          "os::realloc",
          "os::strdup",
          "AllocateHeap",
          "ReallocateHeap",
          "ChunkPool::allocate",
          "Arena::grow",
          "Chunk::operator new");

  private static Path dir;
  private static Path dump;

  @BeforeAll
  static void dumpAJvmFromItsStart() throws Exception {
    HeapProfilingTest.extractPreloadAllocator();
    dir = HeapProfilingTest.freshDir("jvm-sites");
    dump = finalDump("first", "version");
  }

  /** A JVM sampled every 16 KiB on average from start, its profile written at its exit. */
  private static Path finalDump(String prefix, String... cli) throws Exception {
    ForkedJvm.Result r =
        new ForkedJvm()
            .env("LD_PRELOAD", HeapProfilingTest.preload.toString())
            .env(
                "MALLOC_CONF",
                "prof_active:true,lg_prof_sample:14,prof_final:true,prof_prefix:"
                    + dir.resolve(prefix))
            .cli(cli);
    assertEquals(0, r.exitCode, r.toString());
    try (Stream<Path> files = Files.list(dir)) {
      List<Path> dumps =
          files
              .filter(p -> p.getFileName().toString().startsWith(prefix + "."))
              .collect(Collectors.toList());
      assertEquals(1, dumps.size(), dumps.toString());
      return dumps.get(0);
    }
  }

  private static String analyze(String... args) throws Exception {
    ForkedJvm.Result r = new ForkedJvm().cli(args);
    assertEquals(0, r.exitCode, r.toString());
    return r.stdout;
  }

  private static void assertNoWrapper(String output, String what) {
    for (String wrapper : WRAPPERS) {
      assertFalse(output.contains(wrapper), wrapper + " in the " + what + ":\n" + output);
    }
  }

  @Test
  void jeprofsTopSiteIsAWrapperAndOursIsTheJvmCodeThatCalledIt() throws Exception {
    String jeprof = HeapDump.jeprofText(dump);
    String jeprofTop = jeprof.lines().filter(l -> l.contains("%")).findFirst().orElse("");
    // jeprof adds "@<address>" to a name two functions share (HotSpot has two os::malloc).
    assertTrue(
        jeprofTop.matches(".*\\sos::malloc(@\\p{XDigit}+)?"), "jeprof's top site:\n" + jeprof);

    String text = analyze("analyze", dump.toString(), "--top", "1000");
    String flat = text.substring(text.indexOf("(flat):"), text.indexOf("(cumulative):"));
    assertNoWrapper(flat, "flat sites");
    String cumulative = text.substring(text.indexOf("(cumulative):"));
    assertNoWrapper(cumulative, "cumulative sites");
    // The top site is HotSpot code that owns what it allocated (a table, a heap's structures).
    String top = flat.lines().skip(2).findFirst().orElseThrow(AssertionError::new);
    assertTrue(top.contains("::"), flat);
    // The total is jeprof's, to the 0.1 MB it prints: no byte was dropped with the wrappers.
    double ours = Double.parseDouble(text.replaceFirst("(?s).*?\\((\\d+) bytes.*", "$1"));
    assertEquals(HeapDump.jeprofTotalMiB(jeprof), ours / (1 << 20), 0.051, text + top);
  }

  @Test
  void collapsedStacksFlameGraphPprofAndDiffHaveNoWrapperSite() throws Exception {
    String collapsed = analyze("analyze", dump.toString(), "--format", "collapsed");
    assertTrue(collapsed.contains("Threads::create_vm"), collapsed);
    for (String line : collapsed.split("\n")) {
      String leaf = line.substring(line.lastIndexOf(';') + 1, line.lastIndexOf(' '));
      assertFalse(WRAPPERS.contains(leaf), line);
    }
    assertNoWrapper(collapsed, "collapsed stacks");

    Path svg = dir.resolve("jvm.svg");
    analyze("analyze", dump.toString(), "--format", "svg", "-o", svg.toString());
    assertNoWrapper(Files.readString(svg), "flame graph");

    Path pprof = dir.resolve("jvm.pb.gz");
    analyze("analyze", dump.toString(), "--format", "pprof", "-o", pprof.toString());
    try (GZIPInputStream in = new GZIPInputStream(Files.newInputStream(pprof))) {
      assertNoWrapper(new String(in.readAllBytes(), StandardCharsets.ISO_8859_1), "pprof");
    }

    // A second JVM that does more (it analyses the first dump): its growth over the first.
    Path second = finalDump("second", "analyze", dump.toString(), "--top", "5");
    String growth = analyze("analyze", second.toString(), "--base", dump.toString(), "--top", "50");
    assertTrue(growth.startsWith("Growth since base"), growth);
    assertNoWrapper(growth, "difference");
  }
}
