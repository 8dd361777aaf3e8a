package dev.nativemem.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class NativeLibraryLoaderTest {

  @Test
  void platformNames() {
    assertEquals("linux-x86_64", NativeLibraryLoader.platform("Linux", "amd64"));
    assertEquals("linux-x86_64", NativeLibraryLoader.platform("Linux", "x86_64"));
    assertEquals("linux-aarch64", NativeLibraryLoader.platform("Linux", "aarch64"));
  }

  @Test
  void unsupportedPlatformNamesWhatWasFoundAndWhatIsSupported() {
    UnsupportedOperationException e =
        assertThrows(
            UnsupportedOperationException.class,
            () -> NativeLibraryLoader.platform("Mac OS X", "aarch64"));
    assertTrue(e.getMessage().contains("os.name='Mac OS X'"), e.getMessage());
    assertTrue(e.getMessage().contains("os.arch='aarch64'"), e.getMessage());
    assertTrue(e.getMessage().contains("linux-x86_64"), e.getMessage());
    assertThrows(
        UnsupportedOperationException.class, () -> NativeLibraryLoader.platform("Linux", "s390x"));
  }

  @Test
  void aJarWithoutThisPlatformsLibraryNamesThePlatformsItCarries() {
    String message =
        NativeLibraryLoader.missingLibrary("linux-aarch64", java.util.List.of("linux-x86_64"));
    assertTrue(
        message.startsWith(
            "this nativemem jar carries no native library for linux-aarch64 (it carries"
                + " linux-x86_64); use the released jar, which carries linux-x86_64,"
                + " linux-aarch64,"),
        message);
    assertTrue(message.endsWith("or set -Dnativemem.library.path"), message);
  }

  @Test
  void extractedLibraryIsPrivate() throws Exception {
    java.nio.file.Path lib = NativeLibraryLoader.loadedPath();
    assertEquals(
        "rwx------",
        java.nio.file.attribute.PosixFilePermissions.toString(
            java.nio.file.Files.getPosixFilePermissions(lib.getParent())));
    assertTrue(
        lib.getParent()
            .getFileName()
            .toString()
            .startsWith("pid" + ProcessHandle.current().pid() + "-"));
  }

  /**
   * A child JVM whose class path puts another version's {@code nativemem.properties} first: the
   * first call fails as the library loads, naming both versions and what to do.
   */
  @Test
  void libraryOfAnotherVersionIsRefusedWhenItLoads(@TempDir Path dir) throws Exception {
    Path properties = dir.resolve("dev/nativemem/nativemem.properties");
    Files.createDirectories(properties.getParent());
    Files.write(properties, "version=0.0.1-older\n".getBytes(StandardCharsets.UTF_8));
    Path err = dir.resolve("stderr.txt");
    Process child =
        new ProcessBuilder(
                Paths.get(System.getProperty("java.home"), "bin", "java").toString(),
                "-cp",
                dir + File.pathSeparator + System.getProperty("java.class.path"),
                "dev.nativemem.cli.NativeMemoryCli",
                "stats")
            .redirectOutput(dir.resolve("stdout.txt").toFile())
            .redirectError(err.toFile())
            .start();
    assertTrue(child.waitFor(60, TimeUnit.SECONDS), "child JVM did not finish");
    String message = Files.readString(err);
    assertEquals(1, child.exitValue(), message);
    String nativeVersion = NativeLibraryLoader.javaVersion(); // this build's, on both sides
    assertTrue(message.contains("version 0.0.1-older"), message);
    assertTrue(message.contains("is version " + nativeVersion), message);
    assertTrue(message.contains("keep one"), message);
  }

  @Test
  void versionMismatchWithAnExplicitLibrarySaysWhichPropertyToFix() {
    String message =
        NativeLibraryLoader.versionMismatch("0.2.0", "0.1.0", Paths.get("/opt/old.so"), true);
    assertTrue(message.contains("/opt/old.so is version 0.1.0"), message);
    assertTrue(message.contains("-Dnativemem.library.path"), message);
    assertTrue(message.contains("built with nativemem 0.2.0"), message);
  }

  /** Container uids have no name: the JDK says "?" for all of them, which must not collide. */
  @Test
  void aUidWithoutANameGetsADirectoryOfItsOwn() {
    String name = System.getProperty("user.name");
    try {
      System.setProperty("user.name", "?");
      assertEquals("uid" + FileOwnership.processUid(), PrivateBase.userForDirectoryName());
      System.setProperty("user.name", "app");
      assertEquals("app", PrivateBase.userForDirectoryName());
    } finally {
      System.setProperty("user.name", name);
    }
  }
}
