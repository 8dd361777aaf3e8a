package dev.nativemem.tests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.attribute.PosixFilePermissions;
import java.nio.file.attribute.UserPrincipal;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import java.util.zip.ZipEntry;
import java.util.zip.ZipFile;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A second local user ({@code nobody}) plants directories, links and FIFOs where nativemem writes,
 * as on a multi-tenant host or in containers sharing a volume (SECURITY.md). The victim is a forked
 * JVM of this user; every case checks what the victim did and what it left alone.
 */
class SharedHostTest {
  private static final String NOBODY_UID = "65534";

  @TempDir Path tmp;

  /** Root, to act as a second user; {@code runuser} to become it. */
  private static void assumeSecondUser() {
    assumeTrue(
        "root".equals(System.getProperty("user.name"))
            && Files.isExecutable(Paths.get("/usr/sbin/runuser")),
        "needs root and runuser to act as a second local user (nobody)");
  }

  /** A directory in the test's temp dir that every user may write, sticky like /tmp. */
  private Path sharedDir() throws Exception {
    Files.setPosixFilePermissions(tmp, PosixFilePermissions.fromString("rwxr-xr-x"));
    Path shared = Files.createDirectory(tmp.resolve("shared"));
    Files.setPosixFilePermissions(shared, PosixFilePermissions.fromString("rwxrwxrwx"));
    run("chmod", "+t", shared.toString());
    return shared;
  }

  private static void asNobody(String... command) throws Exception {
    List<String> full = new ArrayList<>(Arrays.asList("runuser", "-u", "nobody", "--"));
    full.addAll(Arrays.asList(command));
    run(full.toArray(new String[0]));
  }

  private static void run(String... command) throws Exception {
    Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertTrue(p.waitFor(60, TimeUnit.SECONDS) && p.exitValue() == 0, command[0] + ": " + out);
  }

  private static long entries(Path dir) throws IOException {
    try (Stream<Path> list = Files.list(dir)) {
      return list.count();
    }
  }

  /** Case 1: another user creates the extraction directory first and would own the library. */
  @Test
  void extractionDirectoryOfAnotherUserIsRefused() throws Exception {
    assumeSecondUser();
    Path planted = sharedDir().resolve("nativemem-victim");
    asNobody("mkdir", "-m", "755", planted.toString());
    ForkedJvm.Result r = new ForkedJvm().jvmArg("-Dnativemem.tmpdir=" + planted).cli("version");
    assertEquals(1, r.exitCode, r.toString());
    assertTrue(r.stderr.contains(planted + " belongs to uid " + NOBODY_UID), r.toString());
    assertTrue(r.stderr.contains("set -Dnativemem.tmpdir"), r.toString());
    assertEquals(0, entries(planted), "nothing extracted into a directory another user owns");
  }

  /** Case 2: the same for the allocator that every JVM started with LD_PRELOAD would run. */
  @Test
  void envDirectoryOfAnotherUserIsRefused() throws Exception {
    assumeSecondUser();
    Path planted = sharedDir().resolve("preload");
    asNobody("mkdir", "-m", "755", planted.toString());
    ForkedJvm.Result r = new ForkedJvm().cli("env", "--dir", planted.toString());
    assertEquals(1, r.exitCode, r.toString());
    assertTrue(r.stderr.contains(planted + " belongs to uid " + NOBODY_UID), r.toString());
    assertTrue(r.stderr.contains("choose another --dir"), r.toString());
    assertFalse(r.stdout.contains("LD_PRELOAD"), r.toString());
    assertEquals(0, entries(planted));
  }

  /** Case 12: ld.so ignores LD_PRELOAD from a noexec mount; env must not print it as working. */
  @Test
  void envDirectoryOnANoexecMountIsRefused() throws Exception {
    assumeSecondUser();
    Path mount = Files.createDirectory(tmp.resolve("noexec"));
    Process p =
        new ProcessBuilder(
                "mount", "-t", "tmpfs", "-o", "noexec,size=32m", "tmpfs", mount.toString())
            .redirectErrorStream(true)
            .start();
    assumeTrue(p.waitFor() == 0, "cannot mount a noexec tmpfs here");
    try {
      ForkedJvm.Result r = new ForkedJvm().cli("env", "--dir", mount.resolve("x").toString());
      assertEquals(1, r.exitCode, r.toString());
      assertTrue(r.stderr.contains("mounted noexec"), r.toString());
      assertTrue(r.stderr.contains("choose another --dir"), r.toString());
    } finally {
      run("umount", mount.toString());
    }
  }

  /** Case 11: 4 x 536870912 arenas overflowed an int into narenas:-2147483648. */
  @Test
  void envCpusIsRangeChecked() throws Exception {
    ForkedJvm.Result r =
        new ForkedJvm().cli("env", "--dir", tmp.resolve("a").toString(), "--cpus", "536870912");
    assertEquals(2, r.exitCode, r.toString());
    assertTrue(r.stderr.contains("--cpus must be from 1 to 1023"), r.toString());
    ForkedJvm.Result most =
        new ForkedJvm().cli("env", "--dir", tmp.resolve("b").toString(), "--cpus", "1023");
    assertEquals(0, most.exitCode, most.toString());
    assertTrue(most.stdout.contains("export MALLOC_CONF=narenas:4092\n"), most.toString());
  }

  /**
   * Case 8: two JVMs share a temp dir but not a PID namespace (two containers, one volume). The
   * second must not take the first one's live directory for a dead process's, and must still remove
   * it once the first is gone.
   */
  @Test
  void liveExtractionDirectoryInAnotherPidNamespaceIsKept() throws Exception {
    assumeSecondUser();
    Process probe =
        new ProcessBuilder("unshare", "--pid", "--fork", "--mount-proc", "true").start();
    assumeTrue(probe.waitFor() == 0, "unshare cannot make PID namespaces here");
    Path base = tmp.resolve("volume");
    // Its java gets a pid past 300 in its namespace; the other namespace's pids (the JVM's own
    // thread ids count: /proc/<tid> exists) stay far below, so there that pid is "not running".
    Process first =
        new ProcessBuilder(
                "unshare",
                "--pid",
                "--fork",
                "--mount-proc",
                "sh",
                "-c",
                "i=0; while [ $i -lt 300 ]; do /bin/true; i=$((i+1)); done; "
                    + ForkedJvm.JAVA
                    + " -Dnativemem.tmpdir="
                    + base
                    + " -cp "
                    + ForkedJvm.JAR
                    + ":"
                    + ForkedJvm.TEST_CLASSES
                    + " dev.nativemem.tests.HostileProbe hold "
                    + ForkedJvm.JAR
                    + "; true")
            // JDK 24+ warns on stderr about System.load: keep it out of the probe's answers.
            .redirectError(ProcessBuilder.Redirect.INHERIT)
            .start();
    try {
      BufferedReader out =
          new BufferedReader(new InputStreamReader(first.getInputStream(), StandardCharsets.UTF_8));
      String loaded = out.readLine();
      assertTrue(loaded != null && loaded.startsWith("LOADED "), String.valueOf(loaded));
      Path library = Paths.get(loaded.substring("LOADED ".length()));
      String dirName = library.getParent().getFileName().toString();
      assertTrue(Integer.parseInt(dirName.substring(3, dirName.indexOf('-'))) > 300, loaded);

      // Two class loaders: the second makes a per-process copy, which first removes the copies
      // of JVMs that are gone.
      ForkedJvm.Result second =
          new ForkedJvm()
              .launcher("unshare", "--pid", "--fork", "--mount-proc")
              .withTestClasses()
              .jvmArg("-Dnativemem.tmpdir=" + base)
              .main("dev.nativemem.tests.HostileProbe", "two-loaders", ForkedJvm.JAR.toString());
      assertEquals(0, second.exitCode, second.toString());
      assertTrue(Files.isRegularFile(library), "the live JVM's library was deleted");

      first.getOutputStream().close();
      assertTrue(first.waitFor(60, TimeUnit.SECONDS), "the first JVM did not exit");
      ForkedJvm.Result third =
          new ForkedJvm()
              .launcher("unshare", "--pid", "--fork", "--mount-proc")
              .withTestClasses()
              .jvmArg("-Dnativemem.tmpdir=" + base)
              .main("dev.nativemem.tests.HostileProbe", "two-loaders", ForkedJvm.JAR.toString());
      assertEquals(0, third.exitCode, third.toString());
      assertFalse(Files.exists(library.getParent()), "a dead JVM's directory stays");
    } finally {
      first.destroyForcibly();
    }
  }

  /**
   * Case 5: JDK 17 writes the perf map to /tmp/perf-<pid>.map. A link planted there by another user
   * must not be followed; without one, no perf map may be left behind.
   */
  @Test
  void perfMapNeverFollowsAPlantedLinkAndIsNotLeftBehind() throws Exception {
    assumeSecondUser();
    HeapProfilingTest.extractPreloadAllocator();
    Path victim =
        Files.write(tmp.resolve("victim.txt"), "precious".getBytes(StandardCharsets.UTF_8));

    Path planted = tmp.resolve("planted.heap");
    DumpingJvm attacked = new DumpingJvm(planted);
    Path link = Paths.get("/tmp/perf-" + attacked.pid + ".map");
    Files.deleteIfExists(link);
    asNobody("ln", "-s", victim.toString(), link.toString());
    try {
      String result = attacked.dump();
      assertTrue(result.contains("DUMPED " + planted), result);
      assertEquals("precious", new String(Files.readAllBytes(victim), StandardCharsets.UTF_8));
      assertTrue(Files.isSymbolicLink(link), "another user's link was deleted");
    } finally {
      Files.deleteIfExists(link);
    }

    Path clean = tmp.resolve("clean.heap");
    DumpingJvm plain = new DumpingJvm(clean);
    String result = plain.dump();
    assertTrue(result.contains("DUMPED " + clean), result);
    assertFalse(
        Files.exists(Paths.get("/tmp/perf-" + plain.pid + ".map"), LinkOption.NOFOLLOW_LINKS),
        "perf map left in /tmp");
    Path copy = clean.resolveSibling("clean.heap.symbols/perf.map");
    assertTrue(Files.size(copy) > 0, "the sidecar lacks the perf map");
    assertEquals("rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(copy)));
  }

  /** A JVM under the preload allocator that dumps to {@code target} when told to. */
  private static final class DumpingJvm {
    final Process process;
    final long pid;

    DumpingJvm(Path target) throws Exception {
      ProcessBuilder builder =
          new ProcessBuilder(
                  ForkedJvm.JAVA,
                  "-cp",
                  ForkedJvm.JAR + ":" + ForkedJvm.TEST_CLASSES,
                  "dev.nativemem.tests.HostileProbe",
                  "dump-on-cue",
                  target.toString())
              .redirectError(ProcessBuilder.Redirect.INHERIT);
      builder.environment().put("LD_PRELOAD", HeapProfilingTest.preload.toString());
      process = builder.start();
      String line =
          new BufferedReader(
                  new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))
              .readLine();
      assertTrue(line != null && line.startsWith("PID "), String.valueOf(line));
      pid = Long.parseLong(line.substring(4));
    }

    String dump() throws Exception {
      try (OutputStream in = process.getOutputStream()) {
        in.write('\n');
      }
      String rest = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
      assertTrue(process.waitFor(120, TimeUnit.SECONDS), "the dumping JVM hung");
      assertEquals(0, process.exitValue(), rest);
      return rest;
    }
  }

  /** Case 10: mallctl by name must neither act (create arenas, caches) nor return pointers. */
  @Test
  void mallctlReadsHaveNoSideEffects() throws Exception {
    HeapProfilingTest.extractPreloadAllocator();
    ForkedJvm.Result r =
        new ForkedJvm()
            .withTestClasses()
            .env("LD_PRELOAD", HeapProfilingTest.preload.toString())
            .main("dev.nativemem.tests.HostileProbe", "mallctl");
    assertEquals(0, r.exitCode, r.toString());
    assertTrue(r.stdout.contains("REFUSED 1000\n"), r.toString());
    String[] narenas = line(r, "NARENAS").split(" ");
    assertEquals(narenas[0], narenas[1], "reading keys created arenas: " + r);
    assertTrue(
        line(r, "VERSION").startsWith("IllegalArgumentException: mallctl key 'version'")
            && line(r, "VERSION").contains("a string"),
        r.toString());
    assertTrue(line(r, "CREATE").contains("arenas.create makes an arena"), r.toString());
  }

  /** Cases 6 and 7 through the CLI: a dump whose maps name a FIFO ends, with a warning. */
  @Test
  void reportSkipsAFifoNamedByADump() throws Exception {
    Path fifo = tmp.resolve("libplanted.so");
    run("mkfifo", fifo.toString());
    Path dump = tmp.resolve("app.heap");
    Files.write(
        dump,
        ("heap_v2/524288\n  t*: 1: 4096 [0: 0]\n@ 0x1010\n  t*: 1: 4096 [0: 0]\n\n"
                + "MAPPED_LIBRARIES:\n00001000-00002000 r-xp 00000000 fe:00 1  "
                + fifo
                + "\n")
            .getBytes(StandardCharsets.UTF_8));
    Path side = Files.createDirectory(tmp.resolve("app.heap.symbols"));
    run("mkfifo", side.resolve("symbols.json").toString());
    ForkedJvm.Result r = new ForkedJvm().cli("analyze", dump.toString());
    assertEquals(0, r.exitCode, r.toString());
    String all = r.stdout + r.stderr;
    assertTrue(all.contains(fifo + ": is a FIFO, not a regular file"), r.toString());
    assertTrue(
        all.contains("ignored " + side.resolve("symbols.json") + ": is a FIFO"), r.toString());
  }

  /**
   * Case 13: the extraction base is reached through a link another user owns (his link in a sticky
   * directory, pointing at a directory of root's). He could re-point it between any check and any
   * use, so it is refused before anything is created or loaded.
   */
  @Test
  void extractionBaseThroughAnotherUsersLinkIsRefused() throws Exception {
    assumeSecondUser();
    Path shared = sharedDir();
    Path own = Files.createDirectory(tmp.resolve("private"));
    Files.setPosixFilePermissions(own, PosixFilePermissions.fromString("rwx------"));
    asNobody("ln", "-s", own.toString(), shared.resolve("link").toString());
    Path base = shared.resolve("link").resolve("nativemem-victim");
    ForkedJvm.Result r = new ForkedJvm().jvmArg("-Dnativemem.tmpdir=" + base).cli("version");
    assertEquals(1, r.exitCode, r.toString());
    assertTrue(
        r.stderr.contains(shared.resolve("link") + " is a symbolic link of uid " + NOBODY_UID),
        r.toString());
    assertTrue(r.stderr.contains("set -Dnativemem.tmpdir"), r.toString());
    assertEquals(0, entries(own), "nothing made through another user's link");
  }

  /**
   * Case 14: the race behind case 13, played by the other user (a C program of his, as uid nobody):
   * while JVMs of this user start, his link flips between a directory of this user's (which passes
   * every check) and one of his own, where he keeps renaming a library of his over the name
   * nativemem loads. The planted library's constructor appends to a marker file: no start may ever
   * run it, nor take his directory for its own.
   */
  @Test
  void aLinkFlippedDuringStartsNeverLoadsAnotherUsersLibrary() throws Exception {
    assumeSecondUser();
    assumeTrue(ForkedJvm.onPath("cc"), "needs a C compiler (cc) to build the planted library");
    Path shared = sharedDir();
    Path own = Files.createDirectory(tmp.resolve("private"));
    Files.setPosixFilePermissions(own, PosixFilePermissions.fromString("rwx------"));
    Path his = Files.createDirectory(shared.resolve("his"));
    Path hisBase = Files.createDirectory(his.resolve("nativemem-victim"));
    Path marker = tmp.resolve("planted-ran");
    Path source = tmp.resolve("planted.c");
    Files.writeString(
        source,
        "#include <fcntl.h>\n#include <unistd.h>\n"
            + "__attribute__((constructor)) static void planted(void) {\n"
            + "  int fd = open(\""
            + marker
            + "\", O_CREAT | O_WRONLY | O_APPEND, 0644);\n"
            + "  if (fd >= 0) { (void) write(fd, \"x\", 1); close(fd); }\n}\n");
    Path planted = tmp.resolve("planted.so");
    run("cc", "-shared", "-fPIC", "-o", planted.toString(), source.toString());
    String libraryName;
    try (ZipFile jar = new ZipFile(ForkedJvm.JAR.toFile())) {
      ZipEntry entry = jar.getEntry("dev/nativemem/native/linux-x86_64/libnativemem.so");
      libraryName = "lib-" + Long.toHexString(entry.getCrc()) + "-" + entry.getSize() + ".so";
    }
    UserPrincipal nobody =
        FileSystems.getDefault().getUserPrincipalLookupService().lookupPrincipalByName("nobody");
    for (Path p : List.of(his, hisBase, planted)) {
      Files.setOwner(p, nobody);
    }
    Path attacker = tmp.resolve("attacker");
    Files.writeString(tmp.resolve("attacker.c"), ATTACKER);
    run("cc", "-O2", "-o", attacker.toString(), tmp.resolve("attacker.c").toString());
    Path link = shared.resolve("link");
    Path flips = shared.resolve("flips");
    List<Process> attackers = new ArrayList<>();
    int starts = Integer.getInteger("race.starts", 20); // more, by hand: -Drace.starts=200
    int fromHis = 0;
    try {
      attackers.add(asNobodyInBackground(attacker, "flip", shared, own, his, flips));
      attackers.add(asNobodyInBackground(attacker, "plant", planted, hisBase, libraryName));
      for (int i = 0; i < 100 && !Files.exists(flips); i++) {
        Thread.sleep(50);
      }
      for (int i = 0; i < starts; i++) {
        ForkedJvm.Result r =
            new ForkedJvm()
                .jvmArg("-Dnativemem.tmpdir=" + link.resolve("nativemem-victim"))
                .cli("version", "--json");
        if ((r.stdout + r.stderr).contains(his.toRealPath().toString())) {
          fromHis++; // took his directory for its own: his library if his rename came first
        }
      }
    } finally {
      for (Process p : attackers) {
        p.destroyForcibly();
        p.waitFor(10, TimeUnit.SECONDS);
      }
    }
    long loads = Files.exists(marker) ? Files.size(marker) : 0;
    long flipped = Long.parseLong(Files.readString(flips).trim());
    System.out.println(
        "flipped link race: "
            + starts
            + " starts, "
            + flipped
            + " flips, starts that took his directory "
            + fromHis
            + ", planted loads "
            + loads);
    assertEquals(0, loads, "a start loaded the other user's library");
    assertEquals(0, fromHis, "a start took the other user's directory for its own");
    assertTrue(flipped > 1000L * starts, "the link hardly flipped: the race was not run");
  }

  /**
   * The other user's side of case 14, in C so that it runs as fast as he could: {@code flip DIR OWN
   * HIS COUNT} swaps DIR/link between OWN and HIS with one {@code renameat2(RENAME_EXCHANGE)} a
   * turn, writing how many turns to COUNT; {@code plant FILE DIR NAME} hard-links his FILE into DIR
   * and renames it over NAME, without pause.
   */
  private static final String ATTACKER =
      String.join(
          "\n",
          "#define _GNU_SOURCE",
          "#include <fcntl.h>",
          "#include <linux/fs.h>",
          "#include <stdio.h>",
          "#include <string.h>",
          "#include <sys/syscall.h>",
          "#include <unistd.h>",
          "int main(int argc, char **argv) {",
          "  if (argc == 6 && strcmp(argv[1], \"flip\") == 0) {",
          "    if (chdir(argv[2]) != 0 || symlink(argv[3], \"link\") != 0",
          "        || symlink(argv[4], \"link.other\") != 0) return 1;",
          "    int count = open(argv[5], O_CREAT | O_WRONLY | O_TRUNC, 0644);",
          "    for (unsigned long n = 1;; n++) {",
          "      syscall(SYS_renameat2, AT_FDCWD, \"link.other\", AT_FDCWD, \"link\",",
          "              RENAME_EXCHANGE);",
          "      if ((n & 0xfff) == 0) {",
          "        char text[32];",
          "        int length = snprintf(text, sizeof text, \"%lu\\n\", n);",
          "        if (pwrite(count, text, length, 0) < 0) return 1;",
          "      }",
          "    }",
          "  }",
          "  if (argc == 5 && strcmp(argv[1], \"plant\") == 0) {",
          "    if (chdir(argv[3]) != 0) return 1;",
          "    for (;;) {",
          "      unlink(\".planted\");",
          "      if (link(argv[2], \".planted\") == 0) rename(\".planted\", argv[4]);",
          "    }",
          "  }",
          "  return 2;",
          "}",
          "");

  /** Runs {@code command} as nobody (setpriv: no process in between to outlive it). */
  private static Process asNobodyInBackground(Object... command) throws IOException {
    List<String> full =
        new ArrayList<>(
            Arrays.asList(
                "setpriv", "--reuid=" + NOBODY_UID, "--regid=" + NOBODY_UID, "--clear-groups"));
    for (Object part : command) {
      full.add(part.toString());
    }
    return new ProcessBuilder(full).redirectErrorStream(true).start();
  }

  /**
   * Case 15: a dump someone else wrote names a library, a JIT symbol and a host with terminal
   * escapes (clear the screen, set the window title, colour the text, C1 CSI). {@code report} shows
   * them, visibly, and sends none of them to the terminal.
   */
  @Test
  void reportShowsTheControlCharactersOfADumpInsteadOfSendingThem() throws Exception {
    String clear = "\u001b[2J";
    String title = "\u001b]0;owned\u0007";
    String red = "\u001b[31m";
    String c1 = "\u009b1m";
    Path dump = tmp.resolve("app.heap");
    Files.write(
        dump,
        ("heap_v2/524288\n  t*: 2: 8192 [0: 0]\n@ 0x5010 0x1010\n  t*: 2: 8192 [0: 0]\n\n"
                + "MAPPED_LIBRARIES:\n00001000-00002000 r-xp 00000000 fe:00 1  /gone/lib"
                + clear
                + title
                + ".so\n")
            .getBytes(StandardCharsets.UTF_8));
    Path side = Files.createDirectory(tmp.resolve("app.heap.symbols"));
    Files.writeString(
        side.resolve("symbols.json"),
        "{\"format\":\"nativemem-symbols/1\",\"pid\":7,\"host\":\"h\\u001b[31m\\u009b1m\","
            + "\"perf_map\":\"perf-7.map\"}");
    Files.writeString(side.resolve("perf-7.map"), "5000 100 jit" + title + clear + red + c1 + "\n");
    for (String[] args :
        List.of(
            new String[] {"analyze", "--by-process", dump.toString()},
            new String[] {"analyze", "--format", "collapsed", dump.toString()})) {
      ForkedJvm.Result r = new ForkedJvm().cli(args);
      assertEquals(0, r.exitCode, r.toString());
      String all = r.stdout + r.stderr;
      for (char c : new char[] {'\u001b', '\u0007', '\u009b'}) {
        assertEquals(
            -1, all.indexOf(c), String.format("U+%04X reached the terminal: %s", (int) c, r));
      }
      // (collapsed stacks write ';', their frame separator, as ':')
      String separator = args.length == 3 ? ";" : ":";
      assertTrue(
          all.contains("jit\\x1b]0" + separator + "owned\\x07\\x1b[2J\\x1b[31m\\u009b1m"),
          r.toString());
      if (args.length == 3) {
        assertTrue(all.contains("/gone/lib\\x1b[2J\\x1b]0;owned\\x07.so"), r.toString());
        assertTrue(all.contains("h\\x1b[31m\\u009b1m"), r.toString());
      }
    }
  }

  private static String line(ForkedJvm.Result r, String prefix) {
    for (String line : r.stdout.split("\n")) {
      if (line.startsWith(prefix + " ")) {
        return line.substring(prefix.length() + 1);
      }
    }
    throw new AssertionError("no line " + prefix + " in " + r);
  }
}
