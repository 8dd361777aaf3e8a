package dev.nativemem.tests;

import static org.junit.jupiter.api.Assertions.assertFalse;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardCopyOption;
import java.util.List;
import org.junit.jupiter.api.Assumptions;

/**
 * A JRE as JRE base images and Paketo's buildpacks ship one: the Java SE modules, management and
 * instrumentation, no {@code jdk.attach}, no {@code jcmd}. Linked once with {@code jlink} from the
 * running JDK's {@code jmods} into {@code target/pod-jre} and reused.
 */
final class PodRuntime {
  static final List<String> MODULES =
      List.of(
          "java.se",
          "jdk.management",
          "jdk.management.agent",
          "jdk.unsupported",
          "jdk.crypto.ec",
          "jdk.zipfs",
          "jdk.jfr",
          "jdk.net",
          "jdk.charsets",
          "jdk.localedata");

  private PodRuntime() {}

  /**
   * Links {@code modules} with {@code jlink} (and its {@code options}) into {@code image}, through
   * a temporary name renamed at the end, so a half-linked image is never reused.
   */
  static void link(Path jlink, List<String> options, String modules, Path image)
      throws IOException {
    Path temp = image.resolveSibling(image.getFileName() + ".tmp-" + ProcessHandle.current().pid());
    List<String> command = new java.util.ArrayList<>();
    command.add(jlink.toString());
    command.addAll(options);
    command.addAll(
        List.of(
            "--add-modules",
            modules,
            "--strip-debug",
            "--no-header-files",
            "--no-man-pages",
            "--output",
            temp.toString()));
    PodTest.run(command);
    Files.move(temp, image, StandardCopyOption.ATOMIC_MOVE);
  }

  static synchronized Path jre() throws IOException {
    Path jre = Paths.get("target", "pod-jre").toAbsolutePath();
    if (!Files.isExecutable(jre.resolve("bin/java"))) {
      Path jmods = Paths.get(System.getProperty("java.home"), "jmods");
      Assumptions.assumeTrue(
          Files.isDirectory(jmods),
          "jlink needs the JDK's jmods (" + jmods + "): install the JDK's jmods package");
      link(
          Paths.get(System.getProperty("java.home"), "bin", "jlink"),
          List.of("--module-path", jmods.toString()),
          String.join(",", MODULES),
          jre);
    }
    String modules = PodTest.run(List.of(jre.resolve("bin/java").toString(), "--list-modules"));
    assertFalse(modules.contains("jdk.attach"), "the pod's runtime has no jdk.attach: " + modules);
    return OtherUsers.readable(jre); // uid 9999 runs it
  }
}
