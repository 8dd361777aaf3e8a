package dev.nativemem.tests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.lang.reflect.Method;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.FileTime;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Enumeration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import java.util.zip.ZipEntry;
import java.util.zip.ZipFile;
import java.util.zip.ZipOutputStream;
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
    assertTrue(first.contains("\"native_library\":\"0."), first);
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

  /** Every JVM of a user loads one extracted copy per library content, written once. */
  @Test
  void jvmsShareOneCopyNamedByTheJarEntrysCrcAndSize(@TempDir Path dir) throws Exception {
    Path base = dir.resolve("extract");
    ZipEntry entry;
    try (ZipFile jar = new ZipFile(ForkedJvm.JAR.toFile())) {
      entry = jar.getEntry(LIBRARY_ENTRY);
    }
    Path expected =
        dir.toRealPath()
            .resolve("extract")
            .resolve("lib-" + Long.toHexString(entry.getCrc()) + "-" + entry.getSize() + ".so");
    String first = loadedPathIn(base);
    assertEquals(expected.toString(), first);
    assertEquals(entry.getSize(), Files.size(expected));
    assertEquals(
        "r-x------", PosixFilePermissions.toString(Files.getPosixFilePermissions(expected)));
    Object inode = Files.getAttribute(expected, "unix:ino");

    assertEquals(first, loadedPathIn(base));
    assertEquals(inode, Files.getAttribute(expected, "unix:ino"), "the second JVM extracted again");
    try (Stream<Path> files = Files.list(base)) {
      assertEquals(
          List.of(expected.resolveSibling("in-use.lock"), expected),
          files.sorted().collect(Collectors.toList()),
          "no per-process copy");
    }
  }

  /** A copy that is not as written (damaged, or a link) is replaced, and what a link names kept. */
  @Test
  void aDamagedOrLinkedCopyIsReplaced(@TempDir Path dir) throws Exception {
    Path base = dir.resolve("extract");
    Path cached = Paths.get(loadedPathIn(base));
    long size = Files.size(cached);
    Files.setPosixFilePermissions(cached, PosixFilePermissions.fromString("rwx------"));
    Files.write(cached, new byte[] {1, 2, 3}, StandardOpenOption.APPEND);
    Files.setPosixFilePermissions(cached, PosixFilePermissions.fromString("r-x------"));
    assertEquals(cached.toString(), loadedPathIn(base));
    assertEquals(size, Files.size(cached));

    Path elsewhere = Files.write(dir.resolve("elsewhere.so"), "not a library".getBytes());
    Files.delete(cached);
    Files.createSymbolicLink(cached, elsewhere);
    assertEquals(cached.toString(), loadedPathIn(base));
    assertTrue(Files.isRegularFile(cached, LinkOption.NOFOLLOW_LINKS));
    assertEquals("not a library", Files.readString(elsewhere));
  }

  /** Copies of other builds unused for 30 days go when a new one is written; recent ones stay. */
  @Test
  void copiesUnusedForThirtyDaysAreRemoved(@TempDir Path dir) throws Exception {
    Path base = Files.createDirectory(dir.resolve("extract"));
    Files.setPosixFilePermissions(base, PosixFilePermissions.fromString("rwx------"));
    Path old = Files.write(base.resolve("lib-deadbeef-3.so"), "old".getBytes());
    Path oldClass =
        Files.write(base.resolve("class-1-2-java.util.zip.Inflater-ab-3"), "x".getBytes());
    Path recent = Files.write(base.resolve("lib-cafe-6.so"), "recent".getBytes());
    Path other = Files.write(base.resolve("notes.txt"), "someone's".getBytes());
    FileTime fortyDaysAgo = FileTime.fromMillis(System.currentTimeMillis() - 40L * 86_400_000);
    for (Path p : List.of(old, oldClass, other)) {
      Files.setLastModifiedTime(p, fortyDaysAgo);
    }
    loadedPathIn(base);
    assertFalse(Files.exists(old), "an old copy stays");
    assertFalse(Files.exists(oldClass), "an old instrumented class stays");
    assertTrue(Files.exists(recent), "a recent copy was removed");
    assertTrue(Files.exists(other), "a file that is not nativemem's was removed");
  }

  /**
   * A JVM that has run for longer than the 30 days keeps the copy it maps: its lock on the copy
   * stops the cleanup another JVM runs when it writes a copy of its own. Once that JVM is gone, the
   * next cleanup removes it.
   */
  @Test
  void aCopyThatARunningJvmMapsIsKeptHoweverOld(@TempDir Path dir) throws Exception {
    Path base = Files.createDirectory(dir.resolve("extract"));
    Files.setPosixFilePermissions(base, PosixFilePermissions.fromString("rwx------"));
    Process running =
        new ProcessBuilder(
                ForkedJvm.JAVA,
                "-Dnativemem.tmpdir=" + base,
                "-cp",
                ForkedJvm.JAR + java.io.File.pathSeparator + ForkedJvm.TEST_CLASSES,
                AttachTarget.class.getName())
            .redirectErrorStream(true)
            .start();
    try (BufferedReader out =
            new BufferedReader(
                new InputStreamReader(running.getInputStream(), StandardCharsets.UTF_8));
        Writer in = new OutputStreamWriter(running.getOutputStream(), StandardCharsets.UTF_8)) {
      in.write("self version\n");
      in.flush();
      String line;
      while ((line = out.readLine()) != null && !line.equals("SELF DONE")) {
        // the version lines, then SELF DONE: the library is loaded
      }
      Path mapped;
      try (Stream<Path> files = Files.list(base)) {
        mapped =
            files
                .filter(p -> p.getFileName().toString().matches("lib-[0-9a-f]+-[0-9]+\\.so"))
                .findFirst()
                .orElseThrow(() -> new AssertionError("the running JVM extracted nothing"));
      }
      FileTime thirtyOneDaysAgo =
          FileTime.fromMillis(System.currentTimeMillis() - 31L * 86_400_000);
      Files.setLastModifiedTime(mapped, thirtyOneDaysAgo);

      loadedPathIn(base, otherBuild(dir, 1));
      assertTrue(Files.exists(mapped), "a copy that a running JVM maps was removed");

      in.write("exit\n");
      in.flush();
      assertTrue(running.waitFor(60, TimeUnit.SECONDS));
      loadedPathIn(base, otherBuild(dir, 2));
      assertFalse(Files.exists(mapped), "the copy stays after its JVM exited");
    } finally {
      running.destroyForcibly();
    }
  }

  /** The jar with {@code extra} bytes after its library: another build, another copy's name. */
  private static Path otherBuild(Path dir, int extra) throws IOException {
    Path copy = dir.resolve("other-" + extra + ".jar");
    try (ZipFile jar = new ZipFile(ForkedJvm.JAR.toFile());
        ZipOutputStream out = new ZipOutputStream(Files.newOutputStream(copy))) {
      for (Enumeration<? extends ZipEntry> e = jar.entries(); e.hasMoreElements(); ) {
        ZipEntry entry = e.nextElement();
        out.putNextEntry(new ZipEntry(entry.getName()));
        try (InputStream bytes = jar.getInputStream(entry)) {
          bytes.transferTo(out);
        }
        if (entry.getName().equals(LIBRARY_ENTRY)) {
          out.write(new byte[extra]);
        }
        out.closeEntry();
      }
    }
    return copy;
  }

  private static String loadedPathIn(Path base, Path jar) throws Exception {
    ForkedJvm.Result r =
        new ForkedJvm().jvmArg("-Dnativemem.tmpdir=" + base).jar(jar, "version", "--json");
    assertEquals(0, r.exitCode, r.toString());
    return pathOf(r.stdout);
  }

  private static String loadedPathIn(Path base) throws Exception {
    ForkedJvm.Result r =
        new ForkedJvm().jvmArg("-Dnativemem.tmpdir=" + base).cli("version", "--json");
    assertEquals(0, r.exitCode, r.toString());
    return pathOf(r.stdout);
  }

  private static Path extractLibrary(Path dir) throws Exception {
    Path target = dir.resolve("libnativemem.so");
    try (ZipFile jar = new ZipFile(ForkedJvm.JAR.toFile())) {
      Files.copy(jar.getInputStream(jar.getEntry(LIBRARY_ENTRY)), target);
    }
    return Paths.get(target.toString());
  }
}
