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

  static synchronized Path jre() throws IOException {
    Path jre = Paths.get("target", "pod-jre").toAbsolutePath();
    if (!Files.isExecutable(jre.resolve("bin/java"))) {
      Path jmods = Paths.get(System.getProperty("java.home"), "jmods");
      Assumptions.assumeTrue(
          Files.isDirectory(jmods),
          "jlink needs the JDK's jmods (" + jmods + "): install the JDK's jmods package");
      Path temp = jre.resolveSibling("pod-jre.tmp-" + ProcessHandle.current().pid());
      PodTest.run(
          List.of(
              Paths.get(System.getProperty("java.home"), "bin", "jlink").toString(),
              "--module-path",
              jmods.toString(),
              "--add-modules",
              String.join(",", MODULES),
              "--strip-debug",
              "--no-header-files",
              "--no-man-pages",
              "--output",
              temp.toString()));
      Files.move(temp, jre, StandardCopyOption.ATOMIC_MOVE);
    }
    String modules = PodTest.run(List.of(jre.resolve("bin/java").toString(), "--list-modules"));
    assertFalse(modules.contains("jdk.attach"), "the pod's runtime has no jdk.attach: " + modules);
    return OtherUsers.readable(jre); // uid 9999 runs it
  }
}
