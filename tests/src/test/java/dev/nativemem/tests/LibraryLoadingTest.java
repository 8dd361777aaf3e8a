package dev.nativemem.tests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.reflect.Method;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.zip.ZipEntry;
import java.util.zip.ZipFile;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** How the jar finds, extracts and loads libnativemem.so. */
class LibraryLoadingTest {
  private static final String LIBRARY_ENTRY = "dev/nativemem/native/linux-x86_64/libnativemem.so";

  @Test
  void jarCarriesTheLibraryAtThePlatformPath() throws Exception {
    try (ZipFile jar = new ZipFile(ForkedJvm.JAR.toFile())) {
      ZipEntry entry = jar.getEntry(LIBRARY_ENTRY);
      assertTrue(entry != null && entry.getSize() > 100_000, "missing " + LIBRARY_ENTRY);
    }
  }

  /** A Flink TaskManager loads user code in a fresh class loader on every job restart. */
  @Test
  void twoClassLoadersInOneJvmEachGetAWorkingLibrary() throws Exception {
    String first = versionsFromFreshClassLoader();
    String second = versionsFromFreshClassLoader();
    assertTrue(first.contains("\"native\":\"0."), first);
    assertNotEquals(pathOf(first), pathOf(second), "each class loader needs its own copy");
  }

  @Test
  void explicitLibraryPathIsUsed(@TempDir Path dir) throws Exception {
    Path library = extractLibrary(dir);
    ForkedJvm.Result r =
        new ForkedJvm().jvmArg("-Dnativemem.library.path=" + library).cli("version", "--json");
    assertEquals(0, r.exitCode, r.toString());
    assertTrue(r.stdout.contains("\"library_path\":\"" + library + "\""), r.toString());
  }

  /** Case 9 of issue 11: the JVM says "another classloader", one word, since JDK 17. */
  @Test
  void explicitLibraryPathServesTwoClassLoaders(@TempDir Path dir) throws Exception {
    Path library = extractLibrary(dir);
    ForkedJvm.Result r =
        new ForkedJvm()
            .withTestClasses()
            .jvmArg("-Dnativemem.library.path=" + library)
            .main("dev.nativemem.tests.HostileProbe", "two-loaders", ForkedJvm.JAR.toString());
    assertEquals(0, r.exitCode, r.toString());
    assertTrue(r.stdout.contains("LOADER 0 {\"java\""), r.toString());
    assertTrue(r.stdout.contains("LOADER 1 {\"java\""), r.toString());
    assertTrue(r.stdout.contains("\"library_path\":\"" + library + "\""), r.toString());
  }

  @Test
  void wrongExplicitLibraryPathIsAnErrorThatNamesIt() throws Exception {
    String wrong = "/nonexistent/dir/libnativemem.so";
    ForkedJvm.Result r = new ForkedJvm().jvmArg("-Dnativemem.library.path=" + wrong).cli("version");
    assertEquals(1, r.exitCode, r.toString());
    assertTrue(
        r.stderr.contains("-Dnativemem.library.path=" + wrong + " does not name a file"),
        r.toString());
  }

  @Test
  void explicitPathToAFileThatIsNotALibraryIsAnError(@TempDir Path dir) throws Exception {
    Path garbage = Files.write(dir.resolve("libnativemem.so"), "not an ELF file".getBytes());
    ForkedJvm.Result r =
        new ForkedJvm().jvmArg("-Dnativemem.library.path=" + garbage).cli("version");
    assertEquals(1, r.exitCode, r.toString());
    assertTrue(r.stderr.contains("cannot be loaded"), r.toString());
    assertTrue(r.stderr.contains(garbage.toString()), r.toString());
  }

  @Test
  void extractionDirectoryIsPrivateAndConfigurable(@TempDir Path dir) throws Exception {
    Path base = dir.resolve("extract");
    ForkedJvm.Result r =
        new ForkedJvm().jvmArg("-Dnativemem.tmpdir=" + base).cli("version", "--json");
    assertEquals(0, r.exitCode, r.toString());
    assertTrue(r.stdout.contains(base.toString()), r.toString());
    assertEquals(
        "rwx------",
        java.nio.file.attribute.PosixFilePermissions.toString(Files.getPosixFilePermissions(base)));
  }

  @Test
  void sharedWritableExtractionDirectoryIsRefused(@TempDir Path dir) throws Exception {
    Path base = Files.createDirectory(dir.resolve("open"));
    Files.setPosixFilePermissions(
        base, java.nio.file.attribute.PosixFilePermissions.fromString("rwxrwxrwx"));
    ForkedJvm.Result r = new ForkedJvm().jvmArg("-Dnativemem.tmpdir=" + base).cli("version");
    assertEquals(1, r.exitCode, r.toString());
    assertTrue(r.stderr.contains("writable by other users"), r.toString());
    assertTrue(r.stderr.contains("-Dnativemem.tmpdir"), r.toString());
  }

  private static String versionsFromFreshClassLoader() throws Exception {
    try (URLClassLoader loader =
        new URLClassLoader(
            new URL[] {ForkedJvm.JAR.toUri().toURL()}, ClassLoader.getPlatformClassLoader())) {
      Class<?> facade = Class.forName("dev.nativemem.NativeMemory", true, loader);
      Object versions = facade.getMethod("version").invoke(null);
      Method toJson = versions.getClass().getMethod("toJson");
      return (String) toJson.invoke(versions);
    }
  }

  private static String pathOf(String versionsJson) {
    int start = versionsJson.indexOf("\"library_path\":\"") + 16;
    return versionsJson.substring(start, versionsJson.indexOf('"', start));
  }

  private static Path extractLibrary(Path dir) throws Exception {
    Path target = dir.resolve("libnativemem.so");
    try (ZipFile jar = new ZipFile(ForkedJvm.JAR.toFile())) {
      Files.copy(jar.getInputStream(jar.getEntry(LIBRARY_ENTRY)), target);
    }
    return Paths.get(target.toString());
  }
}
