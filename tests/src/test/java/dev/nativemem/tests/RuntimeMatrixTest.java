package dev.nativemem.tests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.jr.ob.JSON;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Every runtime users ship, one JVM per cell: {@code jlink}ed images (built here from the cell's
 * JDK, whichever JDK runs the tests, cached under {@code target/runtimes}), the JDKs as installed,
 * the JVM flags that change what nativemem can see, and the file systems of locked-down pods (a
 * read-only root, a noexec {@code /tmp}) in a mount namespace of the cell's own, and the bundled
 * allocator preloaded into a jlinked image, whose heap profile names the probe's planted line. Each
 * cell runs {@link RuntimeCellProbe} (stats, breakdown, advice, handles, metrics, a watch) and is
 * attached from outside; each feature's answer, or its stated absence, is asserted. The aarch64
 * cells run Debian's arm64 JRE under qemu-user ({@link Arm64Runtime}) on the jar's linux-aarch64
 * libraries, the bundled allocator as that JVM's {@code env} extracts it. docs/tested.md's
 * supported-runtimes table names the cells ({@link #CELLS}).
 */
class RuntimeMatrixTest {
  static final Path JDK_17 = Paths.get("/usr/lib/jvm/java-17-openjdk-amd64");
  static final Path JDK_25 = Paths.get("/usr/lib/jvm/temurin-25-jdk-amd64");
  static final String NO_JFR = "java.se,jdk.unsupported,jdk.management,jdk.zipfs";
  static final String READ_ONLY_ROOT = "read-only-root";
  static final String NOEXEC_TMP = "noexec-tmp";
  static final String BUNDLED_ALLOCATOR = "bundled-allocator";
  static final String JUNIT = "junit";
  static final String IMPORT_REWRITING = "import-rewriting";

  /** The noexec cell's library directory: a tmpfs of its own mount namespace, mounted there. */
  static final String ELSEWHERE = "/mnt/nativemem";

  /** One cell: a runtime ({@code jdk} as installed, or a jlink of {@code modules}) and flags. */
  static final class Cell {
    final String name;
    final Path jdk;
    final String modules;
    final List<String> flags;

    /**
     * Null, {@link #READ_ONLY_ROOT} or {@link #NOEXEC_TMP} (the file systems the JVM sees), or
     * {@link #BUNDLED_ALLOCATOR} (preloaded, as {@code env} extracts it, and a heap profile
     * dumped), or {@link #JUNIT} (the agent loaded and the JUnit extension run on a leaking class),
     * or {@link #IMPORT_REWRITING} (glibc's malloc, a heap profile dumped by import rewriting).
     */
    final String setup;

    Cell(String name, Path jdk, String modules, String... flags) {
      this(name, jdk, modules, null, List.of(flags));
    }

    private Cell(String name, Path jdk, String modules, String setup, List<String> flags) {
      this.name = name;
      this.jdk = jdk;
      this.modules = modules;
      this.setup = setup;
      this.flags = flags;
    }

    /** A cell whose JVM runs as {@code setup} says. */
    static Cell on(String setup, String name, Path jdk, String modules, String... flags) {
      return new Cell(name, jdk, modules, setup, List.of(flags));
    }

    /** Whether the cell's JVM runs in a mount namespace of its own. */
    boolean ownMounts() {
      return READ_ONLY_ROOT.equals(setup) || NOEXEC_TMP.equals(setup);
    }

    /** Whether the cell's JVM is the arm64 one, run under qemu-user. */
    boolean emulated() {
      return jdk.equals(Arm64Runtime.HOME);
    }

    boolean has(String flag) {
      return flags.contains(flag);
    }

    boolean nmtOn() {
      return flags.stream()
          .anyMatch(
              f ->
                  f.equals("-XX:NativeMemoryTracking=summary")
                      || f.equals("-XX:NativeMemoryTracking=detail"));
    }

    boolean hasModule(String module) {
      if (modules == null) {
        return true;
      }
      if (modules.startsWith("all-but:")) {
        return !module.equals(modules.substring("all-but:".length()));
      }
      List<String> listed =
          modules.equals("pod") ? PodRuntime.MODULES : List.of(modules.split(","));
      return listed.contains(module)
          || (listed.contains("java.se") && module.startsWith("java."))
          || (module.equals("java.management") && listed.contains("jdk.management"));
    }

    /** What the matrix asserts in this cell, as docs/tested.md's table must say it. */
    String asserted() {
      return String.join("; ", assertedParts());
    }

    /** {@link #asserted()}, part by part. */
    List<String> assertedParts() {
      List<String> parts = new ArrayList<>();
      parts.add("stats, advice, handles, metrics, a watch: answer");
      if (BUNDLED_ALLOCATOR.equals(setup)) {
        if (emulated()) {
          parts.add("env extracts the aarch64 allocator (readelf)");
        }
        parts.add("a heap profile dumped: analyze names the planted Java line");
      }
      if (IMPORT_REWRITING.equals(setup)) {
        parts.add("a heap profile dumped by import rewriting: analyze names the planted Java line");
      }
      if (JUNIT.equals(setup)) {
        parts.add(
            "the JUnit extension fails a class leaking Deflaters, naming their count and line");
      }
      if (NOEXEC_TMP.equals(setup)) {
        parts.add(
            "library loaded from -Dnativemem.tmpdir; without it, refused naming noexec and the"
                + " property");
      }
      parts.add("breakdown: RSS, heap, allocator, handles, unaccounted");
      parts.add(
          "NMT " + (nmtOn() ? "figures (committed >= heap committed)" : "absent, the flag named"));
      parts.add(
          hasModule("java.management")
              ? "memory pools"
              : "memory pools absent, java.management named");
      if (emulated()) {
        parts.add("attach: not tried under emulation");
      } else if (has("-XX:+DisableAttachMechanism")) {
        parts.add("attach: refused within 2 s, the flag named");
      } else if (!hasModule("java.instrument")) {
        parts.add(
            "attach: answered from outside (/proc, GC.heap_info"
                + (nmtOn() ? ", NMT summary" : "")
                + "), java.instrument named");
      } else {
        parts.add("attach: stats from inside");
      }
      return parts;
    }

    /** The runtime, as the table names it. */
    String runtime() {
      String named = jdkNamed();
      if (modules == null) {
        return named + setupNamed();
      }
      return named + " jlink " + modulesNamed() + setupNamed();
    }

    /** The JDK the runtime comes from, as the tables name it. */
    String jdkNamed() {
      return jdk.equals(JDK_25)
          ? "Temurin 25"
          : emulated() ? "Debian OpenJDK 17 arm64 under qemu-user" : "Debian OpenJDK 17";
    }

    /** The modules of a jlinked image as the tables name them; null for a JDK as installed. */
    String modulesNamed() {
      if (modules == null) {
        return null;
      }
      return (modules.equals("pod") ? "the pod test's modules" : modules)
          .replace("all-but:", "all but ");
    }

    private String setupNamed() {
      if (READ_ONLY_ROOT.equals(setup)) {
        return ", read-only root file system, only /tmp writable, uid 9999 without a home";
      }
      if (NOEXEC_TMP.equals(setup)) {
        return ", /tmp a noexec tmpfs";
      }
      if (BUNDLED_ALLOCATOR.equals(setup)) {
        return ", the bundled allocator preloaded";
      }
      if (JUNIT.equals(setup)) {
        return ", the agent and the JUnit extension";
      }
      if (IMPORT_REWRITING.equals(setup)) {
        return ", glibc's malloc";
      }
      return "";
    }

    /** The table's row for this cell. */
    String row() {
      return "| `"
          + name
          + "` | "
          + runtime()
          + " | "
          + (flags.isEmpty() ? "" : "`" + String.join(" ", flags) + "`")
          + " | "
          + asserted()
          + " |";
    }

    @Override
    public String toString() {
      return name;
    }
  }

  /** docs/tested.md's runtime table has this test's rows, one per cell, and no other. */
  @org.junit.jupiter.api.Test
  void theDocsTableIsTheMatrix() throws IOException {
    List<String> rows = new ArrayList<>();
    boolean in = false;
    for (String line : Files.readAllLines(DocPages.ROOT.resolve("docs/tested.md"))) {
      if (line.startsWith("## ")) {
        in = line.equals("## Runtimes");
      } else if (in && line.startsWith("| `")) {
        rows.add(line);
      }
    }
    List<String> expected = new ArrayList<>();
    CELLS.forEach(cell -> expected.add(cell.row()));
    assertEquals(String.join("\n", expected), String.join("\n", rows));
  }

  /**
   * README.md's {@code runtimes} row: the matrix summed up (its runtimes, flags and file systems,
   * and each assertion with the number of cells that make it), so that the row and the matrix
   * cannot disagree.
   */
  @org.junit.jupiter.api.Test
  void theReadmeRowSumsUpTheMatrix() throws IOException {
    String row =
        Files.readAllLines(DocPages.ROOT.resolve("README.md")).stream()
            .filter(line -> line.startsWith("| runtimes |"))
            .findFirst()
            .orElse("(README.md has no runtimes row)");
    assertEquals(readmeRow(CELLS), row);
  }

  /** README.md's {@code runtimes} row for {@code cells}. */
  static String readmeRow(List<Cell> cells) {
    Set<String> jdks = new LinkedHashSet<>();
    Set<String> images = new LinkedHashSet<>();
    Set<String> flags = new LinkedHashSet<>();
    Set<String> setups = new LinkedHashSet<>();
    Map<String, Integer> asserted = new LinkedHashMap<>();
    for (Cell cell : cells) {
      jdks.add(cell.jdkNamed());
      if (cell.modules != null) {
        images.add(cell.modulesNamed());
      }
      cell.flags.forEach(f -> flags.add("`" + f + "`"));
      String setup = cell.setupNamed();
      if (!setup.isEmpty()) {
        setups.add(setup.substring(2));
      }
      cell.assertedParts().forEach(part -> asserted.merge(part, 1, Integer::sum));
    }
    List<String> checks = new ArrayList<>();
    asserted.forEach(
        (part, n) -> checks.add(part + (n == cells.size() ? " (every cell)" : " (" + n + ")")));
    return "| runtimes | "
        + cells.size()
        + " cells, one JVM each, from "
        + String.join(" and ", jdks)
        + ": as installed, or `jlink`ed from "
        + String.join("; ", images)
        + "; flags "
        + String.join(" ", flags)
        + "; "
        + String.join("; ", setups)
        + ". Asserted, with the number of cells: "
        + String.join("; ", checks)
        + ". Each cell: [docs/tested.md](docs/tested.md#runtimes) |";
  }

  /** The cells; docs/tested.md's table has one row per name. */
  static final List<Cell> CELLS =
      List.of(
          new Cell("jdk17-java.base", JDK_17, "java.base", "-XX:NativeMemoryTracking=summary"),
          new Cell("jdk17-java.base+java.management", JDK_17, "java.base,java.management"),
          new Cell(
              "jdk17-java.se-without-jdk.jfr", JDK_17, NO_JFR, "-XX:NativeMemoryTracking=summary"),
          new Cell(
              "jdk25-java.se-without-jdk.jfr", JDK_25, NO_JFR, "-XX:NativeMemoryTracking=summary"),
          new Cell("jdk17-all-but-jdk.management", JDK_17, "all-but:jdk.management"),
          new Cell("jdk17-pod", JDK_17, "pod", "-XX:NativeMemoryTracking=summary"),
          new Cell(
              "debian-openjdk-17",
              JDK_17,
              null,
              "-XX:+UseSerialGC",
              "-XX:NativeMemoryTracking=detail"),
          new Cell("temurin-25", JDK_25, null, "-XX:+UseZGC", "-XX:NativeMemoryTracking=summary"),
          new Cell(
              "jdk17-parallel-no-perfdata", JDK_17, null, "-XX:+UseParallelGC", "-XX:-UsePerfData"),
          new Cell(
              "jdk17-g1-nmt-off-no-cds",
              JDK_17,
              null,
              "-XX:+UseG1GC",
              "-XX:NativeMemoryTracking=off",
              "-Xshare:off"),
          new Cell("jdk17-zgc", JDK_17, null, "-XX:+UseZGC", "-XX:NativeMemoryTracking=summary"),
          new Cell("jdk17-xrs", JDK_17, null, "-Xrs"),
          new Cell("jdk17-attach-disabled", JDK_17, null, "-XX:+DisableAttachMechanism"),
          Cell.on(READ_ONLY_ROOT, "jdk17-read-only-root", JDK_17, null),
          Cell.on(
              NOEXEC_TMP,
              "jdk17-noexec-tmp",
              JDK_17,
              null,
              "-Dnativemem.tmpdir=" + ELSEWHERE + "/lib"),
          Cell.on(
              BUNDLED_ALLOCATOR, "jdk17-java.se-without-jdk.jfr-bundled-allocator", JDK_17, NO_JFR),
          Cell.on(JUNIT, "jdk17-java.se-without-jdk.jfr-junit", JDK_17, NO_JFR),
          Cell.on(BUNDLED_ALLOCATOR, "aarch64-jdk17-bundled-allocator", Arm64Runtime.HOME, null),
          Cell.on(JUNIT, "aarch64-jdk17-junit", Arm64Runtime.HOME, null),
          Cell.on(IMPORT_REWRITING, "aarch64-jdk17-import-rewriting", Arm64Runtime.HOME, null));

  /**
   * The cells, or those whose name starts with {@code -Dnativemem.cells} (e.g. {@code aarch64}).
   */
  static Stream<Cell> cells() {
    String only = System.getProperty("nativemem.cells", "");
    return CELLS.stream().filter(cell -> cell.name.startsWith(only));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("cells")
  void everyFeatureAnswersOrSaysWhatIsAbsent(Cell cell) throws Exception {
    Path java = java(cell);
    List<String> command = new ArrayList<>(launcher(cell));
    command.add(java.toString());
    command.addAll(cell.flags);
    command.add("-cp");
    command.add(classPath(cell));
    Path dump = null;
    if (BUNDLED_ALLOCATOR.equals(cell.setup) || IMPORT_REWRITING.equals(cell.setup)) {
      dump = Files.createTempDirectory(Paths.get("target"), "cell-dump").toAbsolutePath();
      dump = dump.resolve("planted.heap");
      command.add(command.size() - 2, "-Dnativemem.cell.dump=" + dump);
    }
    if (JUNIT.equals(cell.setup)) {
      command.add(command.size() - 2, "-javaagent:" + ForkedJvm.JAR);
      command.add(command.size() - 2, "-Dnativemem.cell.junit=true");
      command.set(
          command.size() - 1,
          command.get(command.size() - 1)
              + ":"
              + LeakedBytesCheckTest.JUNIT_EXTENSION
              + ":"
              + System.getProperty("java.class.path"));
    }
    command.add(RuntimeCellProbe.class.getName());
    ProcessBuilder builder =
        new ProcessBuilder(command).redirectError(ProcessBuilder.Redirect.INHERIT);
    if (BUNDLED_ALLOCATOR.equals(cell.setup)) {
      builder.environment().put("LD_PRELOAD", bundledAllocator(cell, java).toString());
    }
    Process probe = builder.start();
    try {
      Map<String, String> output = new LinkedHashMap<>();
      Map<String, Integer> exits = new LinkedHashMap<>();
      long pid = -1;
      BufferedReader lines =
          new BufferedReader(new InputStreamReader(probe.getInputStream(), StandardCharsets.UTF_8));
      for (String line; (line = lines.readLine()) != null; ) {
        String[] f = line.split(" ", 4);
        if (f[0].equals("feature")) {
          exits.put(f[1], Integer.parseInt(f[2]));
          output.put(
              f[1],
              new String(
                  Base64.getDecoder().decode(f.length > 3 ? f[3] : ""), StandardCharsets.UTF_8));
        } else if (f[0].equals("ready")) {
          pid = Long.parseLong(f[1]);
          break;
        }
      }
      assertTrue(pid > 0, cell + ": the probe never got ready: " + output);
      for (String feature : exits.keySet()) {
        String text = output.get(feature);
        assertEquals(0, exits.get(feature), cell + " " + feature + ":\n" + text);
        assertFalse(text.contains("Exception"), cell + " " + feature + ":\n" + text);
        assertFalse(text.trim().endsWith("null"), cell + " " + feature + ":\n" + text);
      }
      assertTrue(output.get("stats").contains("allocator"), output.get("stats"));
      breakdown(cell, output.get("breakdown"), output.get("breakdown-text"));
      assertTrue(output.get("watch").startsWith("samples "), output.get("watch"));
      if (dump != null) {
        plantedLineNamed(dump, output.get("dump"));
        // The engine that wrote it, as its sidecar names it.
        String sidecar = Files.readString(dump.resolveSibling("planted.heap.symbols/symbols.json"));
        String engine = IMPORT_REWRITING.equals(cell.setup) ? "import-rewriting" : "jemalloc";
        assertEquals(engine, JSON.std.mapFrom(sidecar).get("engine"), sidecar);
      }
      if (JUNIT.equals(cell.setup)) {
        String junit = output.get("junit");
        assertTrue(
            junit.contains("RESULT LeaksDeflaters NativeLeakError: native handles leaked in"),
            junit);
        // The planted count and line, as the fixture made them.
        assertTrue(
            junit.contains(
                LeakedBytesFixtures.DEFLATERS
                    + " open (never closed) Deflater, created at "
                    + LeakedBytesFixtures.LeaksDeflaters.class.getName()
                    + ".leaks(LeakedBytesFixtures.java:"),
            junit);
      }
      if (NOEXEC_TMP.equals(cell.setup)) {
        String maps = Files.readString(Paths.get("/proc/" + pid + "/maps"));
        assertTrue(maps.contains(" " + ELSEWHERE + "/lib/"), maps);
        assertFalse(maps.matches("(?s).* /tmp/\\S*libnativemem.*"), maps);
        refusedWithoutTheProperty(cell, java);
      }
      if (!cell.emulated()) {
        attach(cell, pid);
      }
    } finally {
      probe.getOutputStream().close();
      if (!probe.waitFor(20, TimeUnit.SECONDS)) {
        probe.destroyForcibly();
      }
    }
  }

  /**
   * The bundled allocator as the cell's {@code env} extracts it (once per architecture, under
   * {@code target/runtimes}); under emulation, readelf says it is the aarch64 one.
   */
  private static synchronized Path bundledAllocator(Cell cell, Path java) throws Exception {
    Path dir =
        Paths.get("target", "runtimes", cell.emulated() ? "preload-aarch64" : "preload")
            .toAbsolutePath();
    Path library = dir.resolve("libnativemem_jemalloc.so");
    if (!Files.exists(library)) {
      ForkedJvm jvm = new ForkedJvm();
      if (cell.emulated()) {
        jvm.launcher(Arm64Runtime.QEMU).java(java);
      }
      ForkedJvm.Result r = jvm.cli("env", "--dir", dir.toString());
      assertEquals(0, r.exitCode, r.toString());
      assertTrue(
          r.stdout.contains("export LD_PRELOAD=" + library.toRealPath() + "\n"), r.toString());
    }
    String header = PodTest.run(List.of("readelf", "--file-header", library.toString()));
    assertTrue(
        header.matches(
            "(?s).*Machine: +"
                + (cell.emulated() ? "AArch64" : "Advanced Micro Devices X86-64")
                + "\n.*"),
        header);
    return library;
  }

  /** {@code analyze} of the cell's dump names the probe's planted frame, the JVM's own name. */
  private static void plantedLineNamed(Path dump, String frame) throws Exception {
    assertTrue(
        frame.startsWith("dev.nativemem.tests.RuntimeCellProbe.plant(RuntimeCellProbe.java:"),
        frame);
    ForkedJvm.Result r = new ForkedJvm().cli("analyze", dump.toString(), "--format", "collapsed");
    assertEquals(0, r.exitCode, r.toString());
    assertTrue(
        r.stdout
            .lines()
            .anyMatch(l -> l.contains(";" + frame + ";") && l.contains("inflateInit2_")),
        frame + " in\n" + r.stdout);
  }

  /**
   * What runs the cell's JVM: nothing, or {@code unshare} into a mount namespace of its own whose
   * file systems are the cell's (as root; the cell is skipped otherwise).
   */
  private static List<String> launcher(Cell cell) throws IOException {
    if (cell.emulated()) {
      return List.of(Arm64Runtime.QEMU);
    }
    if (!cell.ownMounts()) {
      return List.of();
    }
    PodTest.requireRoot("a mount namespace of its own for " + cell);
    String script;
    if (READ_ONLY_ROOT.equals(cell.setup)) {
      // Every mount read-only, then a new writable /tmp; a write that still lands fails the cell.
      script =
          "for m in $(awk '{print $2}' /proc/self/mounts | sort -u); do"
              + " mount -o remount,bind,ro \"$m\" 2>/dev/null; done;"
              + " mount -t tmpfs -o mode=1777 tmpfs /tmp || exit 3;"
              + " for d in / /var/tmp /dev/shm \"$HOME\"; do if touch \"$d/.nativemem-ro\" 2>/dev/null;"
              + " then rm -f \"$d/.nativemem-ro\"; echo \"$d is writable\" >&2; exit 3; fi; done;"
              + " exec setpriv --reuid 9999 --regid 9999 --clear-groups"
              + " env HOME=/nonexistent \"$0\" \"$@\"";
    } else {
      script =
          "mount -t tmpfs -o noexec,mode=1777 tmpfs /tmp"
              + " && mount -t tmpfs -o mode=0700 tmpfs "
              + ELSEWHERE.substring(0, ELSEWHERE.lastIndexOf('/'))
              + " && mkdir -m 0700 "
              + ELSEWHERE
              + " && exec \"$0\" \"$@\"";
    }
    return List.of("unshare", "--mount", "--propagation", "private", "sh", "-c", script);
  }

  /** The probe's class path, where the cell's JVM can read it (outside this /tmp, for uid 9999). */
  private static String classPath(Cell cell) {
    if (!cell.ownMounts()) {
      return ForkedJvm.JAR + ":" + ForkedJvm.TEST_CLASSES;
    }
    return OtherUsers.outsideTmp(ForkedJvm.JAR)
        + ":"
        + OtherUsers.outsideTmp(Paths.get(ForkedJvm.TEST_CLASSES));
  }

  /** In the noexec cell without {@code -Dnativemem.tmpdir}: the answer names noexec and it. */
  private static void refusedWithoutTheProperty(Cell cell, Path java) throws Exception {
    List<String> command = new ArrayList<>(launcher(cell));
    command.addAll(List.of(java.toString(), "-cp", classPath(cell)));
    command.addAll(List.of(dev.nativemem.cli.NativeMemoryCli.class.getName(), "stats"));
    Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertTrue(p.waitFor(60, TimeUnit.SECONDS), out);
    assertFalse(p.exitValue() == 0, out);
    assertTrue(out.contains("noexec") && out.contains("-Dnativemem.tmpdir"), out);
    assertFalse(out.contains("\tat "), out);
  }

  @SuppressWarnings("unchecked")
  private static void breakdown(Cell cell, String json, String text) throws IOException {
    Map<String, Object> breakdown = JSON.std.mapFrom(json);
    Map<String, Object> jvm = (Map<String, Object>) breakdown.get("jvm");
    Map<String, Object> absent = (Map<String, Object>) jvm.get("absent");
    long heapCommitted = ((Number) jvm.get("heap_committed_bytes")).longValue();
    assertTrue(heapCommitted > 0, json);
    assertTrue(((Number) breakdown.get("rss_bytes")).longValue() > heapCommitted / 100, json);
    assertNotNull(breakdown.get("unaccounted_bytes"), json);
    assertNotNull(breakdown.get("allocator"), json);
    assertNotNull(breakdown.get("handles"), json);
    if (cell.nmtOn()) {
      Map<String, Object> nmt = (Map<String, Object>) jvm.get("nmt");
      assertNotNull(nmt, cell + ": NMT is on:\n" + json);
      // NMT counts the heap it committed: at least what the heap's own figures say.
      assertTrue(((Number) nmt.get("committed_bytes")).longValue() >= heapCommitted, json);
      assertFalse(absent.containsKey("nmt"), json);
      assertTrue(text.contains("NMT committed"), text);
    } else {
      assertNull(jvm.get("nmt"), json);
      assertTrue(String.valueOf(absent.get("nmt")).contains("-XX:NativeMemoryTracking"), json);
      assertTrue(text.contains("NMT") && text.contains("absent: "), text);
    }
    if (cell.hasModule("java.management")) {
      assertFalse(absent.containsKey("memory_pools"), json);
      assertFalse(((List<Object>) jvm.get("non_heap_pools")).isEmpty(), json);
    } else {
      assertTrue(String.valueOf(absent.get("memory_pools")).contains("java.management"), json);
      assertTrue(text.contains("memory pools") && text.contains("java.management"), text);
    }
  }

  /** {@code attach <pid> stats} from the JDK running the tests into the cell's JVM. */
  private static void attach(Cell cell, long pid) throws Exception {
    long start = System.nanoTime();
    ForkedJvm.Result result = new ForkedJvm().cli("attach", String.valueOf(pid), "stats");
    long millis = (System.nanoTime() - start) / 1_000_000;
    if (cell.has("-XX:+DisableAttachMechanism")) {
      assertEquals(1, result.exitCode, result.toString());
      assertTrue(result.stderr.contains("-XX:+DisableAttachMechanism"), result.toString());
      assertTrue(millis < 2_000, "named after " + millis + " ms: " + result);
    } else if (!cell.hasModule("java.instrument")) {
      assertEquals(0, result.exitCode, result.toString());
      assertTrue(result.stderr.contains("java.instrument"), result.toString());
      assertTrue(result.stdout.contains("VmRSS"), result.toString());
      // The JVM's own GC.heap_info names its collector's heap and its address range.
      assertTrue(
          result.stdout.matches("(?s).*--- GC\\.heap_info\\n.*heap.*\\[0x.*"), result.toString());
      if (cell.nmtOn()) {
        assertTrue(result.stdout.contains("Total: reserved="), result.toString());
      }
      assertFalse(result.stdout.contains("null\n"), result.toString());
    } else {
      assertEquals(0, result.exitCode, result.toString());
      assertTrue(result.stdout.contains("allocator"), result.toString());
    }
  }

  /** The cell's {@code java}: the JDK as installed, or a jlink of its modules, built once. */
  static Path java(Cell cell) throws Exception {
    if (cell.emulated()) {
      return Arm64Runtime.java();
    }
    Assumptions.assumeTrue(
        Files.isExecutable(cell.jdk.resolve("bin/java")), cell.jdk + " is not installed here");
    if (cell.modules == null) {
      return cell.jdk.resolve("bin/java");
    }
    // One image per JDK and modules, whichever cells run it.
    String release = cell.jdk.equals(JDK_25) ? "25" : "17";
    Path image =
        Paths.get(
                "target",
                "runtimes",
                "jdk" + release + "-" + cell.modules.replace(',', '+').replace(':', '-'))
            .toAbsolutePath();
    if (!Files.isExecutable(image.resolve("bin/java"))) {
      String modules = cell.modules;
      if (modules.startsWith("all-but:")) {
        modules = allBut(cell.jdk, modules.substring("all-but:".length()));
      } else if (modules.equals("pod")) {
        modules = String.join(",", PodRuntime.MODULES);
      }
      PodRuntime.link(cell.jdk.resolve("bin/jlink"), List.of(), modules, image);
    }
    String listed = PodTest.run(List.of(image.resolve("bin/java").toString(), "--list-modules"));
    // Linked from the cell's JDK, whichever JDK runs the tests.
    assertTrue(listed.contains("java.base@" + release), cell + ":\n" + listed);
    for (String module :
        List.of("java.management", "java.instrument", "jdk.jfr", "jdk.management")) {
      assertEquals(
          cell.hasModule(module),
          listed.contains(module + "@"),
          cell + " " + module + ":\n" + listed);
    }
    return OtherUsers.readable(image).resolve("bin/java");
  }

  /** Every module of {@code jdk} but {@code without} and those that need it. */
  private static String allBut(Path jdk, String without) throws Exception {
    return PodTest.run(
            List.of(
                jdk.resolve("bin/java").toString(),
                "-cp",
                ForkedJvm.TEST_CLASSES,
                ModulesWithout.class.getName(),
                without))
        .trim();
  }
}
