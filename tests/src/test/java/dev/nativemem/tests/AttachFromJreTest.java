package dev.nativemem.tests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.fasterxml.jackson.jr.ob.JSON;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * {@code nativemem attach} as it runs in a pod: from a {@code jlink}ed runtime without {@code
 * jdk.attach} (as JRE and buildpack images ship), as uid 9999 with no home, against a JVM of the
 * same uid, or from the node as root against a JVM with its own mount namespace and {@code /tmp};
 * each refusal says what to do; the result never stays readable in the target; what the target
 * sends is escaped before it reaches the terminal.
 */
class AttachFromJreTest {
  private static final Path RUNTIME =
      Paths.get("target", "jre-without-jdk-attach").toAbsolutePath();
  private static final List<String> AS_9999 =
      List.of("setpriv", "--reuid", "9999", "--regid", "9999", "--clear-groups", "--");

  private static boolean root() {
    return "root".equals(System.getProperty("user.name"));
  }

  /** The runtime, built once per test run: the modules the CLI needs, without jdk.attach. */
  @BeforeAll
  static void runtimeWithoutJdkAttach() throws Exception {
    Path java = RUNTIME.resolve("bin/java");
    if (!Files.isExecutable(java)) {
      Path jlink = Paths.get(System.getProperty("java.home"), "bin", "jlink");
      Process build =
          new ProcessBuilder(
                  jlink.toString(),
                  "--add-modules",
                  "java.base,java.management,java.instrument",
                  "--no-header-files",
                  "--no-man-pages",
                  "--strip-debug",
                  "--output",
                  RUNTIME.toString())
              .inheritIO()
              .start();
      assertTrue(build.waitFor(300, TimeUnit.SECONDS) && build.exitValue() == 0, "jlink failed");
    }
    Process list = new ProcessBuilder(java.toString(), "--list-modules").start();
    String modules = new String(list.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertTrue(modules.contains("java.base@"), modules);
    assertFalse(modules.contains("jdk.attach"), "the runtime has jdk.attach:\n" + modules);
  }

  /** The CLI in the runtime without jdk.attach ({@code -Dattach.test.cli.java} for another). */
  private static ForkedJvm fromRuntime() {
    String other = System.getProperty("attach.test.cli.java");
    return new ForkedJvm()
        .java(
            other != null
                ? Paths.get(other)
                : OtherUsers.readable(RUNTIME).resolve("bin/java")); // uid 9999 runs it
  }

  private static List<String> attachArgs(long pid, String... command) {
    List<String> args = new ArrayList<>(List.of("attach", Long.toString(pid)));
    args.addAll(List.of(command));
    return args;
  }

  /** Its resident set in kB as the kernel counts it. */
  private static long rssBytes(long pid) throws IOException {
    for (String line : Files.readAllLines(Paths.get("/proc/" + pid + "/status"))) {
      if (line.startsWith("VmRSS:")) {
        return Long.parseLong(line.replaceAll("[^0-9]", "")) * 1024;
      }
    }
    throw new IOException("no VmRSS for " + pid);
  }

  @SuppressWarnings("unchecked")
  private static Map<String, Object> object(Map<String, Object> json, String key) {
    return (Map<String, Object>) json.get(key);
  }

  /** The pod path: JRE without jdk.attach, uid 9999, HOME=/nonexistent, target of uid 9999. */
  @Test
  void breakdownFromAJreWithoutJdkAttachAsAUserWithNoHome() throws Exception {
    assumeTrue(root(), "setpriv to uid 9999 needs root (CI runs as root)");
    try (AttachTargetProcess target =
        new AttachTargetProcess(AS_9999, List.of(), List.of(ForkedJvm.TEST_CLASSES))) {
      long before = rssBytes(target.pid);
      ForkedJvm.Result r =
          fromRuntime()
              .launcher(AS_9999.toArray(new String[0]))
              .env("HOME", "/nonexistent")
              .cli(attachArgs(target.pid, "breakdown", "--json").toArray(new String[0]));
      long after = rssBytes(target.pid);
      assertEquals(0, r.exitCode, r.toString());
      Map<String, Object> view = JSON.std.mapFrom(r.stdout.trim());
      // The target's own figure, read while the agent ran in it: between the kernel's before and
      // after (the agent's classes and library grow it).
      long rss = ((Number) object(view, "process").get("rss_bytes")).longValue();
      assertTrue(
          rss >= before * 0.95 && rss <= after * 1.05,
          "RSS " + rss + " attached, " + before + ".." + after + " in /proc/" + target.pid);
      assertFalse(r.stderr.contains("Exception"), r.stderr);
    }
  }

  /**
   * From the node: a JVM of uid 9999 in its own mount and pid namespaces with a private /tmp, as in
   * a container: its socket and trigger carry the pid it sees itself by.
   */
  @Test
  void rootReachesAJvmWithItsOwnTmpThroughAJarCopyItKeepsForIt() throws Exception {
    assumeTrue(root(), "unshare and mount need root (CI runs as root)");
    List<String> launcher =
        new ArrayList<>(
            List.of(
                "unshare",
                "--mount",
                "--propagation",
                "private",
                "--pid",
                "--mount-proc",
                "--fork",
                "sh",
                "-c",
                "mount -t tmpfs tmpfs /tmp && exec \"$0\" \"$@\""));
    launcher.addAll(AS_9999);
    // Its /tmp is a new tmpfs: its class path must not be under this one's /tmp.
    String classes = OtherUsers.outsideTmp(Paths.get(ForkedJvm.TEST_CLASSES)).toString();
    try (AttachTargetProcess target =
        new AttachTargetProcess(launcher, List.of(), List.of(classes))) {
      Path theirTmp = Paths.get("/proc/" + target.pid + "/root/tmp");
      String nspid = "";
      for (String line : Files.readAllLines(Paths.get("/proc/" + target.pid + "/status"))) {
        if (line.startsWith("NSpid:")) {
          String[] ids = line.trim().split("\\s+");
          nspid = ids[ids.length - 1];
        }
      }
      assertFalse(nspid.equals(Long.toString(target.pid)), "the target should have its own pids");
      assertFalse(
          Files.isSameFile(theirTmp, Paths.get("/tmp")), "the target should have its own /tmp");
      long before = rssBytes(target.pid);
      ForkedJvm.Result r =
          fromRuntime().cli(attachArgs(target.pid, "stats", "--json").toArray(new String[0]));
      long after = rssBytes(target.pid);
      assertEquals(0, r.exitCode, r.toString());
      Map<String, Object> stats = JSON.std.mapFrom(r.stdout.trim());
      long rss = ((Number) object(stats, "process").get("rss_bytes")).longValue();
      assertTrue(rss >= before * 0.95 && rss <= after * 1.05, rss + " vs " + before + ".." + after);
      // The target loaded a copy in a private directory of its uid in its own /tmp, named by its
      // content, the target's, 0400: it stays, as the JVM keeps the jar on its class path, and
      // later commands reuse it.
      Path privateDir = theirTmp.resolve(".nativemem-agent-9999");
      assertEquals(9999, Files.getAttribute(privateDir, "unix:uid", LinkOption.NOFOLLOW_LINKS));
      assertEquals(
          "rwx------",
          PosixFilePermissions.toString(
              Files.getPosixFilePermissions(privateDir, LinkOption.NOFOLLOW_LINKS)));
      List<Path> copies = agentCopies(privateDir);
      assertEquals(1, copies.size(), copies.toString());
      assertEquals(List.of(privateDir), agentCopies(theirTmp), "nothing else in its /tmp");
      Path copy = copies.get(0);
      assertTrue(
          copy.getFileName().toString().matches("nativemem-agent-[0-9a-f]{32}\\.jar"),
          copy.toString());
      assertEquals(9999, Files.getAttribute(copy, "unix:uid", LinkOption.NOFOLLOW_LINKS));
      assertEquals(
          "r--------",
          PosixFilePermissions.toString(
              Files.getPosixFilePermissions(copy, LinkOption.NOFOLLOW_LINKS)));
      assertEquals(Files.size(ForkedJvm.JAR), Files.size(copy));
      // The JVM put the copy on its system class path, whose resources resolve through it.
      ForkedJvm.Result handles =
          fromRuntime().cli(attachArgs(target.pid, "handles").toArray(new String[0]));
      assertEquals(0, handles.exitCode, handles.toString());
      assertEquals(0, fromRuntime().cli("attach", Long.toString(target.pid), "advice").exitCode);
      assertEquals(List.of(copy), agentCopies(privateDir), "one copy, reused");
      assertTrue(Files.exists(theirTmp.resolve(".java_pid" + nspid)), "its socket, by its own pid");
      try (Stream<Path> left = Files.list(theirTmp)) {
        assertTrue(
            left.noneMatch(p -> p.getFileName().toString().startsWith(".attach_pid")),
            "the trigger is removed");
      }
    }
  }

  private static List<Path> agentCopies(Path dir) throws IOException {
    try (Stream<Path> files = Files.list(dir)) {
      return files
          .filter(p -> p.getFileName().toString().matches("\\.?nativemem-agent-.*"))
          .collect(java.util.stream.Collectors.toList());
    }
  }

  /** Another uid than the target's (and not root): refused at once with the exact line to run. */
  @Test
  void anotherUsersJvmIsRefusedWithTheLineToRunAsThatUser() throws Exception {
    assumeTrue(root(), "setpriv to other uids needs root (CI runs as root)");
    List<String> asNobody = List.of("runuser", "-u", "nobody", "--");
    try (AttachTargetProcess target =
        new AttachTargetProcess(asNobody, List.of(), List.of(ForkedJvm.TEST_CLASSES))) {
      ForkedJvm.Result r =
          fromRuntime()
              .launcher("setpriv", "--reuid", "9998", "--regid", "9998", "--clear-groups", "--")
              .env("HOME", "/nonexistent")
              .cli(attachArgs(target.pid, "stats").toArray(new String[0]));
      assertEquals(1, r.exitCode, r.toString());
      assertTrue(r.stderr.contains("runs as uid 65534"), r.stderr);
      assertTrue(
          r.stderr.contains(
              "runuser -u nobody -- "
                  + OtherUsers.readable(RUNTIME).resolve("bin/java")
                  + " -jar "
                  + ForkedJvm.JAR.toRealPath()
                  + " attach "
                  + target.pid
                  + " stats"),
          r.stderr);
      assertTrue(r.stderr.contains("kubectl exec"), r.stderr);
    }
  }

  /** {@code attach --timeout 2 <pid> stats}'s message: it failed, in time, naming --timeout. */
  private static String failsWithinTwoSeconds(long pid) throws Exception {
    long started = System.nanoTime();
    ForkedJvm.Result r = fromRuntime().cli("attach", "--timeout", "2", Long.toString(pid), "stats");
    double seconds = (System.nanoTime() - started) / 1e9;
    assertEquals(1, r.exitCode, r.toString());
    assertTrue(r.stderr.contains("--timeout SECONDS"), r.stderr);
    assertTrue(seconds < 15, "took " + seconds + " s for a 2 s timeout");
    return r.stderr;
  }

  /**
   * -XX:+DisableAttachMechanism: the JVM never opens its socket; its command line says so, read
   * before any wait.
   */
  @Test
  void aJvmWithAttachDisabledIsNamedWithinTheTimeout() throws Exception {
    try (AttachTargetProcess target =
        new AttachTargetProcess(
            List.of(), List.of("-XX:+DisableAttachMechanism"), List.of(ForkedJvm.TEST_CLASSES))) {
      long started = System.nanoTime();
      ForkedJvm.Result r = fromRuntime().cli("attach", Long.toString(target.pid), "stats");
      double seconds = (System.nanoTime() - started) / 1e9;
      assertEquals(1, r.exitCode, r.toString());
      assertTrue(r.stderr.contains("(its command line)"), r.stderr);
      assertTrue(r.stderr.contains("-XX:+DisableAttachMechanism"), r.stderr);
      assertTrue(seconds < 5, "took " + seconds + " s, not at once (the CLI's own start included)");
      assertTrue(target.process.isAlive(), "the target must survive the attempt");
    }
  }

  /**
   * Another uid's process that looks like a JVM to attach and, on the SIGQUIT that starts its
   * listener, opens its socket and then turns its /tmp into a directory only root may write (a bind
   * mount in a user and mount namespace of its own, as any user can): root's attach used to resolve
   * that /tmp again for the jar copy and wrote it there. It resolves it once now: the copy lands in
   * the /tmp it checked, nothing in the other directory.
   */
  @Test
  void aTargetThatMovesItsTmpAfterTheSignalGetsNothingWrittenWhereItPoints() throws Exception {
    assumeTrue(root(), "root attaching another uid's process (CI runs as root)");
    Path python = Paths.get("/usr/bin/python3");
    assumeTrue(Files.isExecutable(python), "the other user's process is a Python script");
    Path work = OtherUsers.newDirectory("tmp-mover-" + System.nanoTime());
    Path protectedDir = Files.createDirectory(work.resolve("roots-only"));
    Files.setPosixFilePermissions(protectedDir, PosixFilePermissions.fromString("rwxr-xr-x"));
    Path script = work.resolve("tmp-mover.py");
    try (java.io.InputStream in = AttachFromJreTest.class.getResourceAsStream("tmp-mover.py")) {
      Files.write(script, in.readAllBytes());
    }
    Path out = work.resolve("out");
    Path lib = Files.createDirectory(work.resolve("lib")); // its fake libjvm.so
    Files.setAttribute(lib, "unix:uid", 9999);
    List<String> command = new ArrayList<>(AS_9999);
    command.addAll(
        List.of(python.toString(), script.toString(), protectedDir.toString(), lib.toString()));
    Process mover =
        new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(out.toFile()).start();
    try {
      String ready = "";
      for (int i = 0; i < 100 && !ready.contains("READY "); i++) {
        Thread.sleep(100);
        ready = Files.readString(out);
      }
      long pid =
          Long.parseLong(ready.substring(ready.indexOf("READY ") + 6).trim().split("\\s+")[0]);
      ForkedJvm.Result r =
          fromRuntime().cli("attach", "--timeout", "5", Long.toString(pid), "stats");
      assertTrue(
          Files.readString(out).contains("MOVED"),
          "the move was made: " + Files.readString(out) + r);
      try (Stream<Path> written = Files.list(protectedDir)) {
        assertEquals(List.of(), written.collect(java.util.stream.Collectors.toList()));
      }
      List<Path> copies = agentCopies(Paths.get("/tmp/.nativemem-agent-9999"));
      assertFalse(copies.isEmpty(), "the copy, in the /tmp that was checked");
      Files.deleteIfExists(Paths.get("/tmp/.java_pid" + pid));
    } finally {
      mover.destroy();
      mover.waitFor(10, TimeUnit.SECONDS);
      OtherUsers.deleteTree(work);
    }
  }

  /**
   * A JVM started with -Xrs does not catch SIGQUIT, and needs none: JDK 17 and 25 open its attach
   * socket at start-up. Reached on both, without a signal.
   */
  @Test
  void aJvmStartedWithXrsIsReachedOnJdk17And25() throws Exception {
    for (String jdk :
        List.of(
            "/usr/lib/jvm/java-17-openjdk-amd64",
            System.getProperty("nativemem.jdk25", "/usr/lib/jvm/temurin-25-jdk-amd64"))) {
      Path java = Paths.get(jdk, "bin", "java");
      if (!Files.isExecutable(java)) {
        System.err.println("skipped " + jdk + ": no JDK there");
        continue;
      }
      try (AttachTargetProcess target =
          new AttachTargetProcess(
              java.toString(), List.of(), List.of("-Xrs"), List.of(ForkedJvm.TEST_CLASSES))) {
        ForkedJvm.Result r =
            fromRuntime().cli("attach", Long.toString(target.pid), "stats", "--json");
        assertEquals(0, r.exitCode, jdk + ": " + r);
        Map<String, Object> stats = JSON.std.mapFrom(r.stdout.trim());
        assertTrue(object(stats, "process").containsKey("rss_bytes"), r.stdout);
        assertTrue(target.process.isAlive(), jdk + ": the target must survive");
      }
    }
  }

  /**
   * A listener that never accepts and whose backlog is full (a hung JVM, or one planted under the
   * target's socket name by its own uid): {@code attach --timeout 3} fails in about 3 s, saying so.
   */
  @Test
  void aListenerThatNeverAcceptsFailsTheAttachByItsTimeout() throws Exception {
    try (AttachTargetProcess target =
        new AttachTargetProcess(List.of(), List.of(), List.of(ForkedJvm.TEST_CLASSES))) {
      // The planted socket is there before any attach: no signal is sent, so the JVM's own
      // listener never starts, and the planted one is the only one to connect to.
      Path socket = Paths.get("/tmp/.java_pid" + target.pid);
      List<java.nio.channels.SocketChannel> queued = new ArrayList<>();
      try (java.nio.channels.ServerSocketChannel listener =
          java.nio.channels.ServerSocketChannel.open(java.net.StandardProtocolFamily.UNIX)) {
        listener.bind(java.net.UnixDomainSocketAddress.of(socket), 1);
        // Fill the backlog: its length + 1 connections wait to be accepted, the next ones block.
        for (int i = 0; i < 3; i++) {
          Thread filler =
              new Thread(
                  () -> {
                    try {
                      java.nio.channels.SocketChannel channel =
                          java.nio.channels.SocketChannel.open(
                              java.net.UnixDomainSocketAddress.of(socket));
                      synchronized (queued) {
                        queued.add(channel);
                      }
                    } catch (IOException e) {
                      // the listener closed while this one waited
                    }
                  });
          filler.setDaemon(true);
          filler.start();
        }
        Thread.sleep(500);
        long started = System.nanoTime();
        ForkedJvm.Result r =
            fromRuntime().cli("attach", "--timeout", "3", Long.toString(target.pid), "stats");
        double seconds = (System.nanoTime() - started) / 1e9;
        assertEquals(1, r.exitCode, r.toString());
        assertTrue(r.stderr.contains("accepts no connection within"), r.stderr);
        assertTrue(seconds < 15, "took " + seconds + " s for a 3 s timeout");
      } finally {
        synchronized (queued) {
          for (java.nio.channels.SocketChannel channel : queued) {
            channel.close();
          }
        }
        Files.deleteIfExists(socket);
      }
    }
  }

  /**
   * Another uid planted the socket name before the target opened its listener: refused before any
   * byte is sent, saying so; the planted socket is left alone.
   */
  @Test
  void aSocketPlantedByAnotherUidIsRefused() throws Exception {
    assumeTrue(root(), "giving the planted socket to another uid needs root (CI runs as root)");
    try (AttachTargetProcess target = new AttachTargetProcess(List.of(ForkedJvm.TEST_CLASSES))) {
      Path socket = Paths.get("/tmp/.java_pid" + target.pid);
      assumeTrue(!Files.exists(socket), "the target's listener runs already");
      try (java.nio.channels.ServerSocketChannel planted =
          java.nio.channels.ServerSocketChannel.open(java.net.StandardProtocolFamily.UNIX)) {
        planted.bind(java.net.UnixDomainSocketAddress.of(socket));
        Files.setAttribute(socket, "unix:uid", 9998);
        ForkedJvm.Result r = fromRuntime().cli("attach", Long.toString(target.pid), "stats");
        assertEquals(1, r.exitCode, r.toString());
        assertTrue(r.stderr.contains("belongs to uid 9998"), r.stderr);
        assertTrue(r.stderr.contains("planted"), r.stderr);
        assertTrue(Files.exists(socket), "the planted socket is evidence: left alone");
      } finally {
        Files.deleteIfExists(socket);
      }
    }
  }

  /**
   * A target that stops answering (here: stopped by SIGSTOP) is named with the wait and the fix.
   */
  @Test
  void aTargetThatDoesNotAnswerInTimeIsNamed() throws Exception {
    try (AttachTargetProcess target = new AttachTargetProcess(List.of(ForkedJvm.TEST_CLASSES))) {
      assertEquals(0, fromRuntime().cli("attach", Long.toString(target.pid), "stats").exitCode);
      Process stop = new ProcessBuilder("kill", "-STOP", Long.toString(target.pid)).start();
      assertEquals(0, stop.waitFor());
      try {
        String message = failsWithinTwoSeconds(target.pid);
        assertTrue(message.contains("did not answer"), message);
      } finally {
        new ProcessBuilder("kill", "-CONT", Long.toString(target.pid)).start().waitFor();
      }
    }
  }

  /** A process that is not a JVM gets no SIGQUIT (it would die of it): it is named. */
  @Test
  void aProcessThatIsNotAJvmIsNamedAndUnharmed() throws Exception {
    Process sleeper = new ProcessBuilder("sleep", "60").start();
    try {
      ForkedJvm.Result r = fromRuntime().cli("attach", Long.toString(sleeper.pid()), "stats");
      assertEquals(1, r.exitCode, r.toString());
      assertTrue(r.stderr.contains("is not a HotSpot JVM"), r.stderr);
      assertTrue(sleeper.isAlive());
    } finally {
      sleeper.destroyForcibly().waitFor();
    }
  }

  /**
   * A CLI killed between the command and the read of its result (here: a client that loads the
   * command and exits) leaves no plaintext in the target's properties, and the target removes the
   * sealed result after its time to live. Read with jcmd, as any user of the target's uid could.
   */
  @Test
  void anUnreadResultIsSealedAndExpires() throws Exception {
    try (AttachTargetProcess target = new AttachTargetProcess(List.of(ForkedJvm.TEST_CLASSES))) {
      ForkedJvm.Result half =
          fromRuntime()
              .withTestClasses()
              .main(AttachHalfway.class.getName(), Long.toString(target.pid), "stats", "--json");
      assertEquals(0, half.exitCode, half.toString());
      String[] idAndKey = half.stdout.trim().split(" ");
      String property = "nativemem.attach.result." + idAndKey[0];
      String sealed = systemProperty(target.pid, property);
      assertNotNull(sealed, "the result should wait for its reader");
      assertFalse(sealed.contains("rss_bytes"), "plaintext result in the properties: " + sealed);
      // It is the result, sealed with the key the command carried.
      String opened =
          dev.nativemem.attach.SealedResult.open(
              Base64.getDecoder().decode(idAndKey[1]), idAndKey[0], sealed);
      assertTrue(opened.contains("rss_bytes"), opened);
      Thread.sleep((dev.nativemem.attach.AttachProtocol.RESULT_TTL_SECONDS + 3) * 1000L);
      assertNull(systemProperty(target.pid, property), "the result outlived its time to live");
    }
  }

  /** The value of {@code name} in JVM {@code pid}'s system properties, through jcmd. */
  static String systemProperty(long pid, String name) throws Exception {
    Path jcmd = Paths.get(System.getProperty("java.home"), "bin", "jcmd");
    Process p =
        new ProcessBuilder(jcmd.toString(), Long.toString(pid), "VM.system_properties").start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertTrue(p.waitFor(60, TimeUnit.SECONDS));
    java.util.Properties properties = new java.util.Properties();
    properties.load(new java.io.StringReader(out));
    return properties.getProperty(name);
  }

  /** Thread names from the target carry terminal escapes: they reach the terminal escaped. */
  @Test
  void terminalEscapesFromTheTargetArePrintedEscaped() throws Exception {
    try (AttachTargetProcess target = new AttachTargetProcess(List.of(ForkedJvm.TEST_CLASSES))) {
      assertEquals(0, fromRuntime().cli("attach", Long.toString(target.pid), "handles").exitCode);
      target.send("open in hostile thread 3", "OPENED");
      ForkedJvm.Result r = fromRuntime().cli("attach", Long.toString(target.pid), "handles");
      assertEquals(0, r.exitCode, r.toString());
      assertTrue(r.stdout.contains("\\x1b]0;pwned\\x07"), r.stdout);
      assertFalse(r.stdout.contains("\u001b") || r.stdout.contains("\u0007"), r.stdout);
      ForkedJvm.Result json =
          fromRuntime().cli("attach", Long.toString(target.pid), "handles", "--json");
      assertEquals(0, json.exitCode, json.toString());
      Map<String, Object> parsed = JSON.std.mapFrom(json.stdout.trim());
      assertTrue(
          JSON.std.asString(parsed).contains("\\u001B]0;pwned\\u0007")
              || json.stdout.contains("\\u001b]0;pwned\\u0007"),
          json.stdout);
      assertFalse(json.stdout.contains("\u001b"), json.stdout);
    }
  }
}
