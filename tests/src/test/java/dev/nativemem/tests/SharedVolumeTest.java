package dev.nativemem.tests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The memory watch on a Kubernetes-like shared volume: a root-owned directory of mode 0777 (an
 * emptyDir) or 2777 (a volume with fsGroup), the JVM running as uid 9999 with no home. The watch
 * starts, writes complete bundles in a private {@code nativemem-9999} it made, and another uid
 * (9998) that renames that directory away, puts a link to a victim directory of uid 9999 in its
 * place and plants links, files and directories named as bundles in the volume cannot make it write
 * or delete anywhere else.
 */
class SharedVolumeTest {
  private static final int UID = 9999;
  private static final int OTHER = 9998;

  @TempDir Path tmp;

  @ParameterizedTest
  @ValueSource(strings = {"777", "2777"})
  void aRootOwnedSharedVolumeIsUsedThroughHandlesOnly(String mode) throws Exception {
    assumeTrue(
        "root".equals(System.getProperty("user.name"))
            && Files.isExecutable(Paths.get("/usr/bin/setpriv")),
        "needs root and setpriv to run the JVM and the other user under their own uids");
    Files.setPosixFilePermissions(tmp, PosixFilePermissions.fromString("rwxr-xr-x"));
    Path volume = Files.createDirectory(tmp.resolve("volume"));
    run("chmod", mode, volume.toString());
    Path victim = Files.createDirectory(tmp.resolve("victim"));
    List<String> precious = List.of("a", "b", "c", "d");
    for (String name : precious) {
      Files.write(victim.resolve(name), new byte[] {42});
    }
    run("chown", "-R", UID + ":" + UID, victim.toString());
    Path signal = volume.resolve("planted");

    List<String> command =
        new ArrayList<>(
            Arrays.asList(
                "setpriv",
                "--reuid=" + UID,
                "--regid=" + UID,
                "--clear-groups",
                ForkedJvm.JAVA,
                "-Dnativemem.tmpdir=/tmp/nativemem-shared-volume-test-" + UID,
                "-cp",
                ForkedJvm.JAR + File.pathSeparator + ForkedJvm.TEST_CLASSES,
                SharedVolumeChild.class.getName(),
                volume.toString(),
                signal.toString()));
    ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true);
    builder.environment().put("HOME", "/nonexistent");
    Path log = tmp.resolve("child.log");
    builder.redirectOutput(log.toFile());
    Process child = builder.start();

    Path mine = volume.resolve("nativemem-" + UID);
    for (int i = 0; i < 600 && !Files.readString(log).contains("BUNDLE "); i++) {
      assertTrue(child.isAlive(), Files.readString(log));
      Thread.sleep(100);
    }
    // Another uid: renames the private directory away, puts a link to the victim in its place,
    // and plants look-alikes in the volume.
    asOther("mv", mine.toString(), volume.resolve("moved").toString());
    asOther("ln", "-s", victim.toString(), mine.toString());
    asOther(
        "ln",
        "-s",
        victim.toString(),
        volume.resolve("nativemem-incident-1-20200101T000000Z-limit").toString());
    asOther("mkdir", volume.resolve("nativemem-incident-2-20200101T000000Z-limit").toString());
    asOther("touch", volume.resolve("nativemem-incident-3-20200101T000000Z-limit").toString());
    asOther("touch", signal.toString());
    assertTrue(child.waitFor(120, TimeUnit.SECONDS), "the child finished");
    String out = Files.readString(log);
    assertEquals(0, child.exitValue(), out);

    assertTrue(out.contains("DIR " + mine), out);
    assertTrue(out.contains("bundles go in " + mine) && out.contains("is shared"), out);
    assertTrue(out.contains("never redirect a write or a deletion"), out);
    assertEquals(precious, names(victim), "nothing of the victim deleted, nothing written there");
    List<String> bundles = names(volume.resolve("moved"));
    assertEquals(
        1, bundles.size(), "retention kept 1, in the directory the watch opened: " + bundles);
    Path last = volume.resolve("moved").resolve(bundles.get(0));
    assertTrue(out.contains(bundles.get(0)), out);
    for (String file : List.of("manifest.json", "timeline.json", "incident.html")) {
      assertTrue(Files.isRegularFile(last.resolve(file)), file + " in " + last);
    }
    assertEquals(UID, (int) Files.getAttribute(last, "unix:uid"));
    assertEquals(
        List.of(
            "moved",
            "nativemem-9999",
            "nativemem-incident-1-20200101T000000Z-limit",
            "nativemem-incident-2-20200101T000000Z-limit",
            "nativemem-incident-3-20200101T000000Z-limit",
            "planted"),
        names(volume),
        "the planted entries untouched");
  }

  private static List<String> names(Path dir) throws IOException {
    try (Stream<Path> s = Files.list(dir)) {
      return s.map(p -> p.getFileName().toString()).sorted().collect(Collectors.toList());
    }
  }

  private static void asOther(String... command) throws Exception {
    List<String> full =
        new ArrayList<>(
            Arrays.asList("setpriv", "--reuid=" + OTHER, "--regid=" + OTHER, "--clear-groups"));
    full.addAll(Arrays.asList(command));
    run(full.toArray(new String[0]));
  }

  private static void run(String... command) throws Exception {
    Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertTrue(p.waitFor(60, TimeUnit.SECONDS) && p.exitValue() == 0, command[0] + ": " + out);
  }
}
