package dev.nativemem.handles.catalogue;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import java.io.IOException;
import java.io.InputStream;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.zip.ZipEntry;
import java.util.zip.ZipOutputStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A class's version is read from its own jar only: the jar's path must match exactly. */
class LibraryVersionsTest {
  private static final String ARTIFACT = "org.example:lib";
  private static final String POM = "META-INF/maven/org.example/lib/pom.properties";
  private static final String PROBE = VersionProbe.class.getName();

  /** Loaded from the test jars only (no parent but the bootstrap loader). */
  public static final class VersionProbe {}

  @Test
  void aPomInAJarWhoseNameOnlyStartsLikeTheClasssIsNotItsVersion(@TempDir Path dir)
      throws Exception {
    Path jar = classJar(dir.resolve("x.jar"), null);
    Path backup = pomJar(dir.resolve("x.jar.bak"), "9.9");
    assertNull(versionOfProbe(backup, jar), "x.jar.bak's pom.properties read as x.jar's");
  }

  @Test
  void aPomInAJarOfTheSameNameElsewhereIsNotItsVersion(@TempDir Path dir) throws Exception {
    Path jar = classJar(Files.createDirectory(dir.resolve("a")).resolve("x.jar"), null);
    Path other = pomJar(Files.createDirectory(dir.resolve("b")).resolve("x.jar"), "9.9");
    assertNull(versionOfProbe(other, jar), "/b/x.jar's pom.properties read as /a/x.jar's");
  }

  @Test
  void thePomInTheClasssOwnJarIsItsVersion(@TempDir Path dir) throws Exception {
    Path backup = pomJar(dir.resolve("x.jar.bak"), "9.9");
    Path jar = classJar(dir.resolve("x.jar"), "1.2.3");
    assertEquals("1.2.3", versionOfProbe(backup, jar));
  }

  /**
   * {@link LibraryVersions#of} for the probe class loaded from {@code jar}, {@code first} first.
   */
  private static String versionOfProbe(Path first, Path jar) throws Exception {
    try (URLClassLoader loader =
        new URLClassLoader(new URL[] {first.toUri().toURL(), jar.toUri().toURL()}, null)) {
      Class<?> probe = loader.loadClass(PROBE);
      assertEquals(jar.toUri().toURL(), probe.getProtectionDomain().getCodeSource().getLocation());
      return LibraryVersions.of(probe, ARTIFACT, null);
    }
  }

  private static Path classJar(Path jar, String version) throws IOException {
    String entry = PROBE.replace('.', '/') + ".class";
    byte[] bytes;
    try (InputStream in = LibraryVersionsTest.class.getClassLoader().getResourceAsStream(entry)) {
      bytes = in.readAllBytes();
    }
    try (ZipOutputStream out = new ZipOutputStream(Files.newOutputStream(jar))) {
      put(out, entry, bytes);
      if (version != null) {
        put(out, POM, ("version=" + version + "\n").getBytes(StandardCharsets.UTF_8));
      }
    }
    return jar;
  }

  private static Path pomJar(Path jar, String version) throws IOException {
    try (ZipOutputStream out = new ZipOutputStream(Files.newOutputStream(jar))) {
      put(out, POM, ("version=" + version + "\n").getBytes(StandardCharsets.UTF_8));
    }
    return jar;
  }

  private static void put(ZipOutputStream out, String name, byte[] bytes) throws IOException {
    out.putNextEntry(new ZipEntry(name));
    out.write(bytes);
    out.closeEntry();
  }
}
