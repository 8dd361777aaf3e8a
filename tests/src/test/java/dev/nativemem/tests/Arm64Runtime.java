package dev.nativemem.tests;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardCopyOption;
import java.util.List;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import java.util.zip.ZipFile;
import org.junit.jupiter.api.Assumptions;

/**
 * Debian's arm64 OpenJDK 17 JRE, run under qemu-user: fetched with {@code apt-get download} (not
 * installed: a multiarch install would upgrade the machine's amd64 packages), extracted with {@code
 * dpkg -x} into {@code target/runtimes} once, its absolute links re-pointed into the extracted
 * tree. Its libraries come from the multiarch libc6:arm64 and zlib1g:arm64 that the aarch64 cross
 * toolchain (libstd-rust-web-dev:arm64) brings.
 */
final class Arm64Runtime {
  static final String QEMU = "qemu-aarch64-static";
  static final String PACKAGE = "openjdk-17-jre-headless:arm64";
  static final Path ROOT =
      Paths.get("target", "runtimes", "debian-openjdk-17-arm64").toAbsolutePath();

  /** The JRE's home, as the matrix's cells name a JDK. */
  static final Path HOME = ROOT.resolve("usr/lib/jvm/java-17-openjdk-arm64");

  private Arm64Runtime() {}

  /** The arm64 {@code java}, extracted on first use; skips the caller naming what is missing. */
  static synchronized Path java() throws IOException {
    Assumptions.assumeTrue(
        ForkedJvm.onPath(QEMU),
        QEMU + " is not on PATH: apt-get install qemu-user-static (test.sh does, as root)");
    Assumptions.assumeTrue(
        Files.exists(Paths.get("/lib/ld-linux-aarch64.so.1")),
        "no arm64 libc (libc6:arm64): install the aarch64 cross toolchain as test.sh does");
    try (ZipFile jar = new ZipFile(ForkedJvm.JAR.toFile())) {
      Assumptions.assumeTrue(
          jar.getEntry("dev/nativemem/native/linux-aarch64/libnativemem.so") != null,
          ForkedJvm.JAR
              + " carries no linux-aarch64 libraries: the build found no aarch64 cross"
              + " toolchain (build/cross-aarch64.sh)");
    }
    Path java = HOME.resolve("bin/java");
    if (!Files.isExecutable(java)) {
      extract();
    }
    return java;
  }

  private static void extract() throws IOException {
    Path temp = ROOT.resolveSibling(ROOT.getFileName() + ".tmp-" + ProcessHandle.current().pid());
    Files.createDirectories(temp);
    PodTest.run(
        List.of("sh", "-c", "cd \"$0\" && apt-get download -qq \"$1\"", temp.toString(), PACKAGE));
    Path deb;
    try (Stream<Path> files = Files.list(temp)) {
      List<Path> debs =
          files.filter(p -> p.toString().endsWith(".deb")).collect(Collectors.toList());
      assertTrue(debs.size() == 1, "apt-get download " + PACKAGE + " gave " + debs);
      deb = debs.get(0);
    }
    Path tree = temp.resolve("root");
    PodTest.run(List.of("dpkg", "-x", deb.toString(), tree.toString()));
    Files.delete(deb);
    // Links such as conf/ -> /etc/java-17-openjdk/: into the extracted tree when it has the target.
    try (Stream<Path> all = Files.walk(tree)) {
      for (Path link : all.filter(Files::isSymbolicLink).collect(Collectors.toList())) {
        Path target = Files.readSymbolicLink(link);
        Path inside = tree.resolve("." + target);
        if (target.isAbsolute() && (Files.exists(inside) || Files.isSymbolicLink(inside))) {
          Files.delete(link);
          Files.createSymbolicLink(link, ROOT.resolve("." + target).normalize());
        }
      }
    }
    Files.move(tree, ROOT, StandardCopyOption.ATOMIC_MOVE);
    Files.delete(temp);
  }
}
