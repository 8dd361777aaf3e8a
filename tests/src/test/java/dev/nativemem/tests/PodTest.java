package dev.nativemem.tests;

import static dev.nativemem.tests.ChildCgroupTest.childCgroup;
import static dev.nativemem.tests.ChildCgroupTest.write;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.jr.ob.JSON;
import com.sun.net.httpserver.HttpServer;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

/**
 * The pod path, in a pod as Flink's and Spring Boot's images make one: a {@code jlink}ed runtime
 * without {@code jdk.attach} (JRE base images and Paketo's JRE have none), uid 9999 with {@code
 * HOME=/nonexistent}, the evidence directory on a root-owned 0777 volume (a small tmpfs, as an
 * {@code emptyDir} with a {@code sizeLimit} is), a memory cgroup. The JVM options are the docs'
 * own, read from docs/flink.md and docs/spring-boot.md (only the jar's and the volume's paths are
 * this machine's): {@code attach} from that runtime as that user, and a TaskManager-like JVM killed
 * by the kernel that leaves a complete bundle on the volume and its verdict in its log. Needs root
 * (a tmpfs mount, a child cgroup, another uid); CI runs as root.
 */
class PodTest {
  static final int UID = 9999;
  static final long LIMIT = OomKillTest.LIMIT;

  /** The Flink image's path of the jar and the pod template's mount path, in docs/flink.md. */
  static final String DOC_JAR = "/opt/flink/lib/nativemem-0.1.0.jar";

  static final String DOC_VOLUME = "/nativemem";

  /** The Spring Boot page's path of the jar in a buildpack image. */
  static final String BOOT_JAR = "/workspace/BOOT-INF/lib/nativemem-0.1.0.jar";

  static final String BOOT_VOLUME = "/nativemem";

  /** The jar's path in the playbook's Dockerfile. */
  static final String PLAYBOOK_JAR = "/opt/nativemem/nativemem-0.1.0.jar";

  @Test
  void theRuntimeHasNoAttachModule() throws Exception {
    Path jre = PodRuntime.jre();
    String modules = run(List.of(jre.resolve("bin/java").toString(), "--list-modules"));
    assertFalse(modules.contains("jdk.attach"), modules);
    assertTrue(modules.contains("java.instrument"), modules);
  }

  @Test
  void theDocsMountAClaimAtTheWatchDirectory() throws Exception {
    List<Map<String, Object>> flink = DocBlocks.flinkDeployment();
    assertEquals("FlinkDeployment", flink.get(0).get("kind"));
    List<String> tm = DocBlocks.flinkTaskManagerOptions();
    assertMountedOnAClaim(flink, "flink-main-container", watchDir(tm, DOC_JAR), DOC_VOLUME);

    // The playbook's Dockerfile: the agent with the watch on a directory of the claim's mount.
    String playbookDir = watchDir(DocBlocks.playbookJavaToolOptions(), PLAYBOOK_JAR);
    assertTrue(playbookDir.startsWith(BOOT_VOLUME + "/"), playbookDir);

    List<Map<String, Object>> boot = DocBlocks.springBootDeployment();
    assertEquals("Deployment", boot.get(0).get("kind"));
    List<String> options =
        Arrays.asList(DocBlocks.springBootJavaToolOptions().trim().split("\\s+"));
    assertMountedOnAClaim(boot, null, watchDir(options, BOOT_JAR), BOOT_VOLUME);
  }

  /**
   * The watch directory JVM options name: the agent {@code jar} with {@code watch=on} and {@code
   * watch.dir} among its arguments, and no {@code -Dnativemem.watch} beside it (the docs keep the
   * watch's settings in one place).
   */
  static String watchDir(List<String> options, String jar) {
    String agent = null;
    for (String option : options) {
      assertFalse(option.startsWith("-Dnativemem.watch"), "the agent's arguments, not " + option);
      if (option.startsWith("-javaagent:" + jar + "=")) {
        agent = option.substring(("-javaagent:" + jar + "=").length());
      }
    }
    assertNotNull(agent, "-javaagent:" + jar + "=... in " + options);
    List<String> args = Arrays.asList(agent.split(","));
    assertTrue(args.contains("watch=on"), agent);
    for (String arg : args) {
      if (arg.startsWith("watch.dir=")) {
        return arg.substring("watch.dir=".length());
      }
    }
    throw new AssertionError("no watch.dir in the agent's arguments " + agent);
  }

  /**
   * The container mounts, at {@code mountPath}, a volume of the pod that is a claim declared in the
   * same block, the watch directory is beneath it, and the pod gives the volume its group.
   */
  static void assertMountedOnAClaim(
      List<Map<String, Object>> docs, String container, String watchDir, String mountPath) {
    Map<String, Object> resource = docs.get(0);
    assertTrue(watchDir.startsWith(mountPath + "/"), watchDir + " beneath " + mountPath);
    String volume = null;
    for (Map<String, Object> mount :
        DocBlocks.list(DocBlocks.container(resource, container).get("volumeMounts"))) {
      if (mountPath.equals(mount.get("mountPath"))) {
        volume = (String) mount.get("name");
      }
    }
    assertNotNull(volume, "a volume mounted at " + mountPath + " in " + resource);
    Map<String, Object> pod = DocBlocks.podSpec(resource);
    assertNotNull(DocBlocks.map(pod.get("securityContext")).get("fsGroup"), "fsGroup: " + pod);
    String claim = null;
    for (Map<String, Object> v : DocBlocks.list(pod.get("volumes"))) {
      if (volume.equals(v.get("name"))) {
        claim = (String) DocBlocks.map(v.get("persistentVolumeClaim")).get("claimName");
      }
    }
    assertNotNull(claim, "volume " + volume + " is a persistentVolumeClaim");
    boolean declared = false;
    for (Map<String, Object> doc : docs) {
      declared |=
          "PersistentVolumeClaim".equals(doc.get("kind"))
              && claim.equals(DocBlocks.map(doc.get("metadata")).get("name"));
    }
    assertTrue(declared, "the claim " + claim + " is declared beside the resource");
  }

  @Test
  void attachWorksFromTheJreAsTheContainersUser() throws Exception {
    requireRoot("attach runs as uid " + UID + " (setpriv)");
    Path jre = PodRuntime.jre();
    List<String> options =
        Arrays.asList(DocBlocks.springBootJavaToolOptions().trim().split("\\s+"));
    Path volume = OtherUsers.newDirectory("pod-attach-" + System.nanoTime());
    mountTmpfs(volume);
    String jvmOptions = String.join(" ", here(options, BOOT_JAR, BOOT_VOLUME, volume));
    List<String> target = new ArrayList<>(asUser());
    target.addAll(
        List.of(
            "JAVA_TOOL_OPTIONS=" + jvmOptions,
            jre.resolve("bin/java").toString(),
            "-cp",
            ForkedJvm.TEST_CLASSES,
            AttachTarget.class.getName()));
    Process process = new ProcessBuilder(target).redirectErrorStream(true).start();
    try {
      BufferedReader out =
          new BufferedReader(
              new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
      StringBuilder before = new StringBuilder();
      String ready = out.readLine();
      for (; ready != null && !ready.startsWith("READY "); ready = out.readLine()) {
        before.append(ready).append('\n'); // "Picked up JAVA_TOOL_OPTIONS", the agent's lines
      }
      assertNotNull(ready, "the target printed no READY line: " + before);
      long pid = Long.parseLong(ready.substring(6).trim());
      // Inflaters the target keeps open: the answer must be the target's, not the attaching JVM's.
      Writer in = new OutputStreamWriter(process.getOutputStream(), StandardCharsets.UTF_8);
      in.write("open 3000\n");
      in.flush();
      for (String line = out.readLine(); line != null && !line.startsWith("OPENED 3000"); ) {
        line = out.readLine();
      }
      // The page's command, with this pod's pid, and the container's environment (exec
      // inherits JAVA_TOOL_OPTIONS).
      List<String> attach = new ArrayList<>(asUser());
      attach.add("JAVA_TOOL_OPTIONS=" + jvmOptions);
      for (String word : DocBlocks.springBootAttachCommand()) {
        attach.add(
            word.endsWith("/bin/java")
                ? jre.resolve("bin/java").toString()
                : word.equals(BOOT_JAR)
                    ? ForkedJvm.JAR.toString()
                    : word.equals("1") ? Long.toString(pid) : word);
      }
      attach.add("--json");
      String answer = run(attach);
      Map<String, Object> breakdown = JSON.std.mapFrom(answer);
      @SuppressWarnings("unchecked")
      Map<String, Object> handles = (Map<String, Object>) breakdown.get("handles");
      long open = 0;
      @SuppressWarnings("unchecked")
      List<Map<String, Object>> kinds = (List<Map<String, Object>>) handles.get("kinds");
      for (Map<String, Object> kind : kinds) {
        if ("Inflater".equals(kind.get("kind"))) {
          open = ((Number) kind.get("open")).longValue();
        }
      }
      assertTrue(open >= 3000, "the target's 3,000 open Inflaters: " + answer);
    } finally {
      process.destroy();
      process.waitFor(10, TimeUnit.SECONDS);
      run(List.of("umount", volume.toString()));
      Files.deleteIfExists(volume);
    }
  }

  @Test
  void aKilledTaskManagerLeavesItsBundleOnTheVolumeAndItsVerdictInTheLog() throws Exception {
    requireRoot("the volume is a tmpfs mount, the JVM runs as uid " + UID);
    Path jre = PodRuntime.jre();
    List<String> options = DocBlocks.flinkTaskManagerOptions();
    String name = "nativemem-pod-" + ProcessHandle.current().pid() + "-" + System.nanoTime();
    Path memory = childCgroup("memory", name);
    Path volume = OtherUsers.newDirectory(name);
    try {
      mountTmpfs(volume);
    } catch (RuntimeException e) {
      Files.deleteIfExists(memory);
      throw e;
    }
    try {
      write(memory.resolve("memory.limit_in_bytes"), String.valueOf(LIMIT));
      if (Files.exists(memory.resolve("memory.memsw.limit_in_bytes"))) {
        write(memory.resolve("memory.memsw.limit_in_bytes"), String.valueOf(LIMIT));
      }
      write(memory.resolve("memory.swappiness"), "0");
      List<String> jvm = here(options, DOC_JAR, DOC_VOLUME, volume);
      Path incidents =
          Paths.get(watchDir(jvm, ForkedJvm.JAR.toAbsolutePath().normalize().toString()));
      String join =
          "echo $$ > "
              + memory.resolve("cgroup.procs")
              + " && exec setpriv --reuid "
              + UID
              + " --regid "
              + UID
              + " --clear-groups env HOME=/nonexistent \"$0\" \"$@\"";
      ForkedJvm.Result r =
          new ForkedJvm()
              .withTestClasses()
              .java(jre.resolve("bin/java"))
              .launcher("sh", "-c", join)
              .jvmArg("-Xmx128m")
              .jvmArg(jvm.toArray(new String[0]))
              .main(OomLeakChild.class.getName(), String.valueOf(LIMIT));
      long killedBy = System.currentTimeMillis();

      assertEquals(137, r.exitCode, "killed by SIGKILL: " + r);
      assertTrue(OomKillTest.oomKills(memory) >= 1, "the cgroup counts the OOM kill");
      List<Path> bundles = new ArrayList<>();
      if (Files.isDirectory(incidents)) {
        for (Path p : OomKillTest.list(incidents)) {
          if (p.getFileName().toString().startsWith("nativemem-incident-")) {
            bundles.add(p);
          }
        }
      }
      // The incident's first bundle, and its newest escalation when usage neared the limit (and,
      // killed while replacing it, the one before).
      assertTrue(
          !bundles.isEmpty() && bundles.size() <= 3,
          "at most three bundles on the volume: " + bundles + r);
      Path bundle = bundles.get(0);
      Map<String, Object> manifest = OomKillTest.json(bundle.resolve("manifest.json"));
      @SuppressWarnings("unchecked")
      List<Map<String, Object>> files = (List<Map<String, Object>>) manifest.get("files");
      for (Map<String, Object> file : files) {
        assertTrue(Files.exists(bundle.resolve((String) file.get("name"))), file.toString());
      }
      String planted = "OomLeakChild.leakOne(OomLeakChild.java:" + OomKillTest.plantedLine() + ")";
      assertTrue(Files.readString(bundle.resolve("handles.json")).contains(planted));

      IncidentLogLines log = IncidentLogLines.of(r.stderr, bundle);
      log.assertMatches(bundle, planted);
      // The docs' way to get the JSON line out of the log, run on this JVM's log.
      Path stderr = Files.createTempFile("nativemem-pod", ".log");
      try {
        Files.writeString(stderr, r.stderr);
        String extracted =
            run(
                List.of(
                    "sh",
                    "-c",
                    DocBlocks.logJsonCommand().replace(DocBlocks.LOGS, "cat " + stderr)));
        // One JSON line per bundle, the first bundle's first.
        assertEquals(
            IncidentLogLines.JSON_PREFIX + extracted.trim().split("\n")[0],
            "nativemem-incident-json: " + log.json.get(0));
        // The playbook's step 4, as written, on the same log: the block, then its JSON line.
        List<String> block = new ArrayList<>();
        for (String line : r.stderr.split("\n")) {
          if (line.startsWith("nativemem-incident")) {
            block.add(line);
          }
        }
        for (String command : DocBlocks.playbookLogCommands(stderr)) {
          if (!ForkedJvm.onPath("jq")) {
            command = command.replaceAll("\\s*\\|\\s*jq \\.$", ""); // the JSON as jq reads it
          }
          String out = run(List.of("sh", "-c", command));
          if (command.contains("grep")) {
            assertEquals(block, Arrays.asList(out.split("\n")), command);
          } else {
            // jq prints 85.0 as 85: numbers are compared by value.
            // The first object jq prints (one per bundle; pretty-printed, each ends with a "}"
            // line of its own).
            int end = out.indexOf("\n}");
            String first = end < 0 ? out.split("\n")[0] : out.substring(0, end + 2);
            assertEquals(
                byValue(JSON.std.mapFrom(log.json.get(0))),
                byValue(JSON.std.mapFrom(first)),
                command);
          }
        }
      } finally {
        Files.delete(stderr);
      }
      System.out.println("verdict block in the log: " + log.blockBytes + " bytes");
      System.out.println(
          "bundle complete "
              + (killedBy - OomKillTest.completedAt(manifest))
              + " ms before the kill");
    } finally {
      run(List.of("umount", volume.toString()));
      Files.deleteIfExists(volume);
      Files.deleteIfExists(memory);
    }
  }

  @Test
  void theContinuousExportSendsFromTheJreAsTheContainersUser() throws Exception {
    requireRoot("the JVM runs as uid " + UID + " (setpriv), its volume is a tmpfs mount");
    Path jre = PodRuntime.jre();
    Path volume = OtherUsers.newDirectory("pod-export-" + System.nanoTime());
    mountTmpfs(volume);
    // The child's own dump at its end, in the shared sticky /tmp (the volume is 0777).
    Path dump = Paths.get("/tmp", "nativemem-pod-export-" + System.nanoTime() + ".heap");
    List<byte[]> bodies = new CopyOnWriteArrayList<>();
    HttpServer collector = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
    collector.createContext(
        "/v1development/profiles",
        exchange -> {
          bodies.add(exchange.getRequestBody().readAllBytes());
          exchange.sendResponseHeaders(200, -1);
          exchange.close();
        });
    collector.start();
    try {
      // The allocator, extracted when the image is built (root, the docs' `RUN ... env --dir`).
      Path image = OtherUsers.newDirectory("pod-export-image-" + System.nanoTime());
      List<String> extract =
          List.of(
              jre.resolve("bin/java").toString(),
              "-jar",
              ForkedJvm.JAR.toString(),
              "env",
              "--dir",
              image.resolve("nativemem").toString());
      String preload = null;
      for (String line : run(extract).split("\n")) {
        if (line.startsWith("export LD_PRELOAD=")) {
          preload = line.substring("export LD_PRELOAD=".length());
        }
      }
      assertNotNull(preload, "env printed an LD_PRELOAD line");
      ForkedJvm.Result r =
          new ForkedJvm()
              .withTestClasses()
              .java(jre.resolve("bin/java"))
              .launcher(
                  "sh",
                  "-c",
                  "exec setpriv --reuid "
                      + UID
                      + " --regid "
                      + UID
                      + " --clear-groups env HOME=/nonexistent \"$0\" \"$@\"")
              // As an image's ENV sets it: for the shell and setpriv too, not the JVM alone.
              .env("LD_PRELOAD", preload)
              .jvmArg(
                  "-javaagent:"
                      + ForkedJvm.JAR
                      + "=export=otlp,export.endpoint=http://127.0.0.1:"
                      + collector.getAddress().getPort()
                      + ",export.interval=1s")
              .main(ProfileExportChild.class.getName(), dump.toString(), "3", "2000");
      assertEquals(0, r.exitCode, r.toString());
      assertFalse(r.stderr.contains("nativemem export"), r.stderr); // no failure, no warning
      assertTrue(Long.parseLong(HeapProfilingTest.line(r, "SENT")) >= 1, r.toString());
      assertFalse(bodies.isEmpty(), r.toString());
      // The profile names the planting Java method: Java frames from the JRE, as that user.
      String last = new String(bodies.get(bodies.size() - 1), StandardCharsets.ISO_8859_1);
      assertTrue(last.contains(ProfileExportChild.class.getName() + ".plant"), r.toString());
    } finally {
      collector.stop(0);
      Files.deleteIfExists(dump);
      OtherUsers.deleteTree(Paths.get(dump + ".symbols"));
      run(List.of("umount", volume.toString()));
      Files.deleteIfExists(volume);
    }
  }

  /**
   * The docs' JVM options with this machine's paths: the jar the docs name is the built jar, the
   * volume's mount path is {@code volume}; every other option as the docs print it.
   */
  static List<String> here(List<String> options, String docJar, String docVolume, Path volume) {
    List<String> here = new ArrayList<>();
    String agent = "-javaagent:" + docJar + "=";
    for (String option : options) {
      if (option.startsWith(agent)) {
        here.add(
            "-javaagent:"
                + ForkedJvm.JAR.toAbsolutePath().normalize()
                + "="
                + option
                    .substring(agent.length())
                    .replace("watch.dir=" + docVolume + "/", "watch.dir=" + volume + "/"));
      } else {
        here.add(option);
      }
    }
    return here;
  }

  /** {@code setpriv} to uid 9999 with no home: as the Flink image's user in a pod. */
  static List<String> asUser() {
    return Arrays.asList(
        "setpriv",
        "--reuid",
        String.valueOf(UID),
        "--regid",
        String.valueOf(UID),
        "--clear-groups",
        "env",
        "HOME=/nonexistent");
  }

  static void requireRoot(String why) throws IOException {
    String uid = run(List.of("id", "-u")).trim();
    Assumptions.assumeTrue("0".equals(uid), "needs root: " + why + " (CI runs as root)");
  }

  /**
   * A small tmpfs, root-owned, mode 0777, as an {@code emptyDir} with a {@code sizeLimit}; skips
   * when this root may not mount (a container without {@code CAP_SYS_ADMIN}).
   */
  static void mountTmpfs(Path at) throws IOException {
    List<String> mount =
        List.of("mount", "-t", "tmpfs", "-o", "size=64m,mode=0777", "nativemem-pod", at.toString());
    try {
      run(mount);
    } catch (AssertionError e) {
      Files.deleteIfExists(at);
      Assumptions.abort("cannot mount a tmpfs for the volume (needs CAP_SYS_ADMIN): " + e);
    }
  }

  /** Runs a command; returns its standard output, failing with all it printed on both streams. */
  static String run(List<String> command) throws IOException {
    Path err = Files.createTempFile("nativemem-pod", ".err");
    try {
      Process p = new ProcessBuilder(command).redirectError(err.toFile()).start();
      String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
      if (!p.waitFor(120, TimeUnit.SECONDS) || p.exitValue() != 0) {
        throw new AssertionError(command + " failed: " + out + Files.readString(err));
      }
      return out;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IOException(e);
    } finally {
      Files.delete(err);
    }
  }

  /** {@code json} with every number as a {@link java.math.BigDecimal} without trailing zeros. */
  private static Object byValue(Object json) {
    if (json instanceof Number) {
      return new java.math.BigDecimal(json.toString()).stripTrailingZeros();
    }
    if (json instanceof Map) {
      Map<Object, Object> out = new java.util.LinkedHashMap<>();
      ((Map<?, ?>) json).forEach((k, v) -> out.put(k, byValue(v)));
      return out;
    }
    if (json instanceof List) {
      List<Object> out = new ArrayList<>();
      for (Object v : (List<?>) json) {
        out.add(byValue(v));
      }
      return out;
    }
    return json;
  }
}
