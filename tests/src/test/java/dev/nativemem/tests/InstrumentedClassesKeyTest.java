package dev.nativemem.tests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Enumeration;
import java.util.List;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import java.util.zip.ZipEntry;
import java.util.zip.ZipFile;
import java.util.zip.ZipOutputStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The agent's kept instrumented JDK classes belong to the build that made them. Image builders
 * (Jib, buildpacks, Nix, Bazel) give every file one fixed modification time, so two builds of the
 * same size are told apart by content only.
 */
class InstrumentedClassesKeyTest {
  private static final String HOOK = "zipCreated";
  private static final String RENAMED = "zipCreatex";

  @Test
  void aSecondBuildOfTheSameSizeAndTimeInstrumentsAnew(@TempDir Path dir) throws Exception {
    Path first = Files.createDirectory(dir.resolve("first")).resolve("nativemem.jar");
    Path second = Files.createDirectory(dir.resolve("second")).resolve("nativemem.jar");
    rewrite(ForkedJvm.JAR, first, false, 0);
    rewrite(ForkedJvm.JAR, second, true, 0);
    long difference = Files.size(first) - Files.size(second);
    if (difference > 0) {
      rewrite(ForkedJvm.JAR, second, true, (int) difference);
    } else if (difference < 0) {
      rewrite(ForkedJvm.JAR, first, false, (int) -difference);
    }
    FileTime fixed = FileTime.fromMillis(315_532_800_000L); // 1980-01-01, as Jib writes
    Files.setLastModifiedTime(first, fixed);
    Files.setLastModifiedTime(second, fixed);
    assertEquals(Files.size(first), Files.size(second), "the builds differ in size");

    Path base = Files.createDirectory(dir.resolve("base"));
    Files.setPosixFilePermissions(base, PosixFilePermissions.fromString("rwx------"));
    ForkedJvm.Result one = probe(first, base);
    assertEquals(0, one.exitCode, one.toString());
    List<String> kept = classFiles(base);
    assertTrue(kept.stream().anyMatch(f -> f.contains("java.util.zip.Inflater")), kept.toString());

    ForkedJvm.Result two = probe(second, base);
    assertEquals(0, two.exitCode, two.toString());
    assertTrue(two.stdout.contains("INFLATER OK"), two.toString());
    assertFalse(
        two.stderr.contains("nativemem agent:"), "the agent of the second build failed: " + two);
    assertNotEquals(kept, classFiles(base), "the second build reused the first one's classes");
  }

  private static ForkedJvm.Result probe(Path jar, Path base) throws Exception {
    return new ForkedJvm()
        .jvmArg("-javaagent:" + jar + "=level=full", "-Dnativemem.tmpdir=" + base)
        .withTestClasses()
        .mainWithoutJar(InflaterProbe.class.getName()); // nativemem from the agent's jar only
  }

  private static List<String> classFiles(Path base) throws IOException {
    try (Stream<Path> files = Files.list(base)) {
      return files
          .map(p -> p.getFileName().toString())
          .filter(n -> n.startsWith("class-"))
          .sorted()
          .collect(Collectors.toList());
    }
  }

  /**
   * Copies {@code jar} entry by entry, in order; with {@code rename}, every class file's constant
   * {@value #HOOK} (a hook the instrumented Inflater calls) becomes {@value #RENAMED}, of the same
   * length, as a build that renamed the hook would have it. {@code pad} bytes of zip comment even
   * out the two builds' sizes.
   */
  private static void rewrite(Path jar, Path target, boolean rename, int pad) throws IOException {
    Files.deleteIfExists(target);
    int renamed = 0;
    try (ZipFile in = new ZipFile(jar.toFile());
        ZipOutputStream out = new ZipOutputStream(Files.newOutputStream(target))) {
      for (Enumeration<? extends ZipEntry> entries = in.entries(); entries.hasMoreElements(); ) {
        ZipEntry entry = entries.nextElement();
        byte[] bytes;
        try (InputStream stream = in.getInputStream(entry)) {
          bytes = stream.readAllBytes();
        }
        if (rename && isClassFile(entry.getName())) {
          byte[] patched = replace(bytes, HOOK, RENAMED);
          renamed += patched == bytes ? 0 : 1;
          bytes = patched;
        }
        ZipEntry copy = new ZipEntry(entry.getName());
        copy.setTime(entry.getTime());
        out.putNextEntry(copy);
        out.write(bytes);
        out.closeEntry();
      }
      out.setComment(" ".repeat(pad));
    }
    if (rename) {
      assertTrue(renamed >= 2, "the hook and its caller were not both found: " + renamed);
    }
  }

  /**
   * A class file: a {@code .class}, or the boot bridge's bytes the agent keeps under its own name.
   */
  private static boolean isClassFile(String name) {
    return name.endsWith(".class") || name.endsWith("/ZipHooks.bytes");
  }

  private static byte[] replace(byte[] bytes, String from, String to) {
    byte[] a = from.getBytes(StandardCharsets.UTF_8);
    byte[] b = to.getBytes(StandardCharsets.UTF_8);
    ByteArrayOutputStream out = new ByteArrayOutputStream(bytes.length);
    boolean changed = false;
    for (int i = 0; i < bytes.length; i++) {
      if (i + a.length <= bytes.length && regionMatches(bytes, i, a)) {
        out.write(b, 0, b.length);
        i += a.length - 1;
        changed = true;
      } else {
        out.write(bytes[i]);
      }
    }
    return changed ? out.toByteArray() : bytes;
  }

  private static boolean regionMatches(byte[] bytes, int at, byte[] pattern) {
    for (int j = 0; j < pattern.length; j++) {
      if (bytes[at + j] != pattern[j]) {
        return false;
      }
    }
    return true;
  }
}
