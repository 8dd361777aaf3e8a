package dev.nativemem.tests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.jr.ob.JSON;
import java.io.IOException;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Heap profiles from forked JVMs under the preload allocator and under Debian's jemalloc, checked
 * against jeprof and against the dump read independently.
 */
class HeapProfilingTest {
  static final String READY = "prof:true,prof_active:false";
  static Path work;
  static Path preload;

  enum Allocator {
    OURS,
    DEBIAN
  }

  @BeforeAll
  static void extractPreloadAllocator() throws Exception {
    work = Paths.get(System.getProperty("nativemem.test.workdir", "target/e2e"), "profiling");
    Files.createDirectories(work);
    ForkedJvm.Result r = new ForkedJvm().cli("env", "--dir", work.resolve("preload").toString());
    assertEquals(0, r.exitCode, r.toString());
    preload = work.resolve("preload").toRealPath().resolve("libnativemem_jemalloc.so");
    assertTrue(r.stdout.contains("export LD_PRELOAD=" + preload + "\n"), r.toString());
  }

  static ForkedJvm jvm(Allocator allocator) throws URISyntaxException {
    ForkedJvm jvm = new ForkedJvm().classPath(testClasses());
    if (allocator == Allocator.OURS) {
      return jvm.env("LD_PRELOAD", preload.toString());
    }
    return jvm.env("LD_PRELOAD", ForkedJvm.DEBIAN_JEMALLOC.toString()).env("MALLOC_CONF", READY);
  }

  static Path testClasses() throws URISyntaxException {
    return Paths.get(
        HeapProfilingChild.class.getProtectionDomain().getCodeSource().getLocation().toURI());
  }

  static Path freshDir(String name) throws IOException {
    Path dir = work.resolve(name + "-" + System.nanoTime());
    Files.createDirectories(dir);
    return dir.toRealPath();
  }

  static ForkedJvm.Result child(ForkedJvm jvm, String... args) throws Exception {
    ForkedJvm.Result r = jvm.main(HeapProfilingChild.class.getName(), args);
    assertEquals(0, r.exitCode, r.toString());
    assertTrue(r.stdout.contains("DONE "), r.toString());
    return r;
  }

  static String line(ForkedJvm.Result r, String key) {
    return r.stdout
        .lines()
        .filter(l -> l.startsWith(key + " "))
        .map(l -> l.substring(key.length() + 1))
        .findFirst()
        .orElseThrow(() -> new AssertionError("no " + key + " line in " + r));
  }

  @ParameterizedTest
  @EnumSource(Allocator.class)
  void churnDumpNamesZlibSitesAndJeprofAgreesWithTheDump(Allocator allocator) throws Exception {
    Path dump = freshDir("churn-" + allocator).resolve("churn.heap");
    ForkedJvm.Result r = child(jvm(allocator), "churn", dump.toString());
    assertEquals(dump.toString(), line(r, "DUMP"));
    HeapDump parsed = HeapDump.read(dump);
    assertEquals(524288, parsed.interval, "jemalloc's default lg_prof_sample 19");
    assertEquals(Long.parseLong(line(r, "SAMPLED")), parsed.headerBytes, "HeapProfile header");

    String text = HeapDump.jeprofText(dump);
    assertTrue(text.contains("inflateInit2_"), text);
    assertTrue(text.contains("deflateInit2_"), text);
    double jeprofMiB = HeapDump.jeprofTotalMiB(text);
    // jeprof's total is its unbiasing of every stack, to the 0.1 MB it prints...
    double unbiasedMiB = parsed.unbiasedBytes() / (1 << 20);
    assertEquals(unbiasedMiB, jeprofMiB, 0.051, text);
    // ...and the header, unbiased the same way, agrees with it: jemalloc 5.3 writes each line
    // pre-biased from unbiased sums (prof_unbias), so they match closely, not exactly.
    double headerMiB = parsed.unbiasedHeaderBytes() / (1 << 20);
    assertEquals(headerMiB, jeprofMiB, 0.1 + jeprofMiB / 100, text);
    // 1500 live Inflaters and 150 Deflaters hold at least 9 MiB of zlib state.
    assertTrue(unbiasedMiB > 9, "unbiased " + unbiasedMiB + " MiB");

    assertEquals("rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(dump)));
    List<String> leftovers =
        Files.list(dump.getParent())
            .map(p -> p.getFileName().toString())
            .filter(n -> n.startsWith("."))
            .collect(Collectors.toList());
    assertEquals(List.of(), leftovers, "no temp files left");
  }

  @ParameterizedTest
  @EnumSource(Allocator.class)
  void dumpAfterStopHasNoSamplesFromWorkDoneWhileStopped(Allocator allocator) throws Exception {
    Path dump = freshDir("stopped-" + allocator).resolve("stopped.heap");
    ForkedJvm.Result r = child(jvm(allocator), "stopped", dump.toString());
    assertEquals("false", line(r, "ACTIVE_AFTER_STOP"));
    String text = HeapDump.jeprofText(dump);
    assertTrue(text.contains("inflateInit2_"), "sampled while active:\n" + text);
    assertFalse(text.contains("deflateInit2_"), "allocated while stopped:\n" + text);
  }

  @ParameterizedTest
  @EnumSource(Allocator.class)
  void sampleIntervalRoundsToAPowerOfTwoAndTakesEffect(Allocator allocator) throws Exception {
    Path dump = freshDir("interval-" + allocator).resolve("interval.heap");
    ForkedJvm.Result r = child(jvm(allocator), "interval", "100000", dump.toString());
    assertEquals("131072", line(r, "INTERVAL"), "100000 rounds to 2^17");
    assertEquals("131072", line(r, "READ_BACK"));
    assertEquals("131072", line(r, "PROFILE_INTERVAL"));
    assertEquals(131072, HeapDump.read(dump).interval);
  }

  @Test
  void threadSwitchLeavesTheCallingThreadUnsampled() throws Exception {
    Path dump = freshDir("thread").resolve("thread.heap");
    ForkedJvm.Result r = child(jvm(Allocator.OURS), "thread", dump.toString());
    assertEquals("false", line(r, "THREAD_ACTIVE"));
    String text = HeapDump.jeprofText(dump);
    assertTrue(text.contains("inflateInit2_"), text);
    assertFalse(text.contains("deflateInit2_"), text);
  }

  @Test
  void sidecarHoldsBuildIdsCopiesAndThePerfMap() throws Exception {
    Path dump = freshDir("sidecar").resolve("app.heap");
    ForkedJvm.Result r = child(jvm(Allocator.OURS), "churn", dump.toString());
    Path sidecar = Paths.get(dump + ".symbols");
    Map<String, Object> json =
        JSON.std.mapFrom(
            new String(
                Files.readAllBytes(sidecar.resolve("symbols.json")), StandardCharsets.UTF_8));
    assertEquals("nativemem-symbols/1", json.get("format"));
    assertEquals(Long.parseLong(line(r, "TIME")), ((Number) json.get("time_ms")).longValue());
    @SuppressWarnings("unchecked")
    List<Map<String, Object>> objects = (List<Map<String, Object>>) json.get("objects");
    Map<String, Object> core =
        objects.stream()
            // the shared copy, lib-<crc32>-<size>.so, or a per-JVM libnativemem.so
            .filter(
                o ->
                    ((String) o.get("path"))
                        .matches(".*/(libnativemem|lib-\\p{XDigit}+-\\d+)\\.so"))
            .findFirst()
            .orElseThrow(() -> new AssertionError("libnativemem.so not listed: " + json));
    assertTrue(core.get("copy") instanceof String, "extracted library saved: " + core);
    Path copy = sidecar.resolve((String) core.get("copy"));
    assertEquals(readelfBuildId(copy), core.get("build_id"));
    Map<String, Object> allocator =
        objects.stream()
            .filter(o -> o.get("path").equals(preload.toString()))
            .findFirst()
            .orElseThrow(() -> new AssertionError("preload allocator not listed: " + json));
    assertEquals(readelfBuildId(preload), allocator.get("build_id"));
    // Objects under java.io.tmpdir are saved (JNI libraries extract themselves there and delete
    // the file at exit); anywhere else a path is taken as stable and not copied.
    boolean underTmp =
        preload.startsWith(Paths.get(System.getProperty("java.io.tmpdir")).toRealPath());
    if (underTmp) {
      assertTrue(allocator.get("copy") instanceof String, "under tmpdir, saved: " + allocator);
      assertEquals(
          readelfBuildId(preload), readelfBuildId(sidecar.resolve((String) allocator.get("copy"))));
    } else {
      assertEquals(null, allocator.get("copy"), "a stable path is not copied");
    }
    // The perf map names JIT-compiled methods: JDK 17+ (the tests run on 17 and newer).
    assertEquals("perf.map", json.get("perf_map"));
    String perfMap = new String(Files.readAllBytes(sidecar.resolve("perf.map")), "UTF-8");
    assertTrue(perfMap.matches("(?s)^[0-9a-fx]+ [0-9a-fx]+ .*"), perfMap.substring(0, 200));
    assertEquals(
        "rw-------",
        PosixFilePermissions.toString(
            Files.getPosixFilePermissions(sidecar.resolve("symbols.json"))));
  }

  static String readelfBuildId(Path file) throws Exception {
    Process p = new ProcessBuilder("readelf", "-n", file.toString()).start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    p.waitFor();
    return out.lines()
        .filter(l -> l.contains("Build ID: "))
        .map(l -> l.substring(l.indexOf("Build ID: ") + 10).trim())
        .findFirst()
        .orElseThrow(() -> new AssertionError("no build-id in " + file));
  }

  @Test
  void concurrentDumpsAreSerialisedAndNeverOverwrite() throws Exception {
    Path dir = freshDir("concurrent");
    ForkedJvm.Result r = child(jvm(Allocator.OURS), "concurrent", dir.toString());
    List<String> results =
        r.stdout
            .lines()
            .filter(l -> l.startsWith("OK ") || l.startsWith("ERR "))
            .collect(Collectors.toList());
    assertEquals(8, results.size(), r.toString());
    assertEquals(4, r.stdout.split("SPAWNED 0\n", -1).length - 1, r.toString());
    long ok = results.stream().filter(l -> l.startsWith("OK ")).count();
    assertEquals(5, ok, "four own files and one winner for the shared name: " + r);
    for (String err : results) {
      if (err.startsWith("ERR ")) {
        assertTrue(
            err.startsWith("ERR java.lang.IllegalArgumentException " + dir.resolve("shared.heap"))
                && err.contains("already exists"),
            err);
      }
    }
    for (int i = 0; i < 4; i++) {
      HeapDump.read(dir.resolve("own-" + i + ".heap"));
    }
    HeapDump.read(dir.resolve("shared.heap"));
  }

  @Test
  void pathErrorsNameThePath() throws Exception {
    Path dir = freshDir("errors");
    ForkedJvm.Result r = child(jvm(Allocator.OURS), "errors", dir.toString());
    assertTrue(
        line(r, "ERR null")
            .startsWith("java.lang.NullPointerException dumpProfile(path): path is null"),
        r.toString());
    assertEquals(
        "java.lang.IllegalArgumentException the directory "
            + dir.resolve("no-such-dir")
            + " of "
            + dir.resolve("no-such-dir/x.heap")
            + " does not exist; create it first",
        line(r, "ERR missing-dir"));
    assertEquals(
        "java.lang.IllegalArgumentException "
            + dir
            + " is a directory; pass the path of a new file inside it, e.g. "
            + dir
            + "/app.heap",
        line(r, "ERR is-dir"));
    assertEquals(
        "java.lang.IllegalArgumentException "
            + dir.resolve("taken.heap")
            + " already exists; heap profiles never overwrite a file: choose a new name or delete"
            + " it",
        line(r, "ERR exists"));
    assertEquals(1, Files.size(dir.resolve("taken.heap")), "existing file untouched");
    assertTrue(
        line(r, "ERR not-writable")
            .startsWith(
                "java.lang.IllegalArgumentException the directory /proc/self is not writable by"
                    + " this process (uid "),
        r.toString());
    assertTrue(
        line(r, "ERR not-writable").endsWith("choose another directory for /proc/self/x.heap"));
    assertEquals(
        "java.lang.IllegalArgumentException the heap profile path is empty; pass a file name such"
            + " as /tmp/app.heap",
        line(r, "ERR empty"));
    // Case 4 of issue 11: there anyone could swap the dump for a link or replace it later.
    assertTrue(
        line(r, "ERR open-dir")
            .startsWith(
                "java.lang.IllegalArgumentException the directory "
                    + dir.resolve("open")
                    + " is writable by other users and not sticky (mode 777)"),
        r.toString());
    try (java.util.stream.Stream<Path> open = Files.list(dir.resolve("open"))) {
      assertEquals(0, open.count(), "nothing written into the refused directory");
    }
    assertTrue(
        line(r, "ERR interval")
            .startsWith(
                "java.lang.IllegalArgumentException sample interval must be a positive number of"
                    + " bytes, got 0"),
        r.toString());
    assertTrue(line(r, "OK dump").startsWith("heap profile " + dir.resolve("ok.heap")), r.stdout);
    List<String> names =
        Files.list(dir).map(p -> p.getFileName().toString()).sorted().collect(Collectors.toList());
    assertEquals(
        List.of("ok.heap", "ok.heap.symbols", "open", "taken.heap"), names, "no partial files");
  }

  /** On glibc the import-rewriting engine profiles, and says what it does not see. */
  @Test
  void glibcProcessIsProfiledByImportRewriting() throws Exception {
    Path dir = freshDir("glibc");
    ForkedJvm.Result r = child(new ForkedJvm().classPath(testClasses()), "errors", dir.toString());
    assertEquals("started", line(r, "OK start"), r.toString());
    assertTrue(line(r, "OK dump").startsWith("heap profile " + dir.resolve("ok.heap")), r.stdout);
    assertEquals("true", line(r, "AVAILABLE"));
    String profiler = line(r, "PROFILER");
    assertTrue(profiler.contains("engine import-rewriting"), profiler);
    assertTrue(profiler.contains("fopen's buffer"), profiler);
    assertTrue(
        profiler.contains(
            "the LD_PRELOAD that 'java -jar " + ForkedJvm.JAR.toRealPath() + " env' prints"),
        profiler);
    assertTrue(!profiler.contains("<nativemem env dir>"), profiler);
    assertEquals(
        List.of("ok.heap", "ok.heap.symbols", "open", "taken.heap"),
        Files.list(dir).map(p -> p.getFileName().toString()).sorted().collect(Collectors.toList()));
  }

  /** A jemalloc started without profiling: import rewriting profiles, and says how to restart. */
  @Test
  void jemallocStartedWithoutProfilingSaysHowToRestart() throws Exception {
    Path dir = freshDir("noprof");
    ForkedJvm.Result r =
        child(
            new ForkedJvm()
                .classPath(testClasses())
                .env("LD_PRELOAD", ForkedJvm.DEBIAN_JEMALLOC.toString()),
            "errors",
            dir.toString());
    assertEquals("started", line(r, "OK start"), r.toString());
    String profiler = line(r, "PROFILER");
    assertTrue(profiler.contains("engine import-rewriting"), profiler);
    assertTrue(
        profiler.contains(
            "jemalloc's own sampler: jemalloc ("
                + ForkedJvm.DEBIAN_JEMALLOC
                + ") can profile but was started without it (opt.prof is false), and it cannot be"
                + " switched on in a running process. Restart the JVM with LD_PRELOAD="
                + ForkedJvm.DEBIAN_JEMALLOC
                + " MALLOC_CONF="
                + READY),
        profiler);
  }

  @Test
  void ourAllocatorStartedWithProfOffSaysHowToRestart() throws Exception {
    Path dir = freshDir("profoff");
    ForkedJvm.Result r =
        child(jvm(Allocator.OURS).env("MALLOC_CONF", "prof:false"), "errors", dir.toString());
    assertTrue(line(r, "OK dump").startsWith("heap profile " + dir.resolve("ok.heap")), r.stdout);
    String profiler = line(r, "PROFILER");
    assertTrue(
        profiler.contains("jemalloc's own sampler: jemalloc (" + preload + ") can profile but was"),
        profiler);
  }
}
