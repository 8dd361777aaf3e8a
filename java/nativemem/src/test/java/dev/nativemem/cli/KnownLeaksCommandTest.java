package dev.nativemem.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.jar.Attributes;
import java.util.jar.JarEntry;
import java.util.jar.JarOutputStream;
import java.util.jar.Manifest;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code known-leaks --class-path} reads a class path as {@code java -cp} does: a Flink {@code
 * lib/} holding a 2.2.1 {@code Compactor} (FLINK-39753's frame) is found through {@code lib/*},
 * through {@code lib} and through a colon list, and a JVM started with {@code -cp 'lib/*'} loads
 * the same class.
 */
class KnownLeaksCommandTest {
  private static final String COMPACTOR = "org.apache.flink.state.rocksdb.sstmerge.Compactor";

  @TempDir Path tmp;
  private Path lib;

  @BeforeEach
  void flinkLib() throws IOException, InterruptedException {
    Path src = Files.createDirectories(tmp.resolve("src/org/apache/flink/state/rocksdb/sstmerge"));
    Files.writeString(
        src.resolve("Compactor.java"),
        "package org.apache.flink.state.rocksdb.sstmerge;\n"
            + "public class Compactor { public void compact() {} }\n");
    Path classes = Files.createDirectories(tmp.resolve("classes"));
    Process javac =
        new ProcessBuilder(
                Path.of(System.getProperty("java.home"), "bin", "javac").toString(),
                "-d",
                classes.toString(),
                src.resolve("Compactor.java").toString())
            .redirectErrorStream(true)
            .start();
    String said = new String(javac.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertEquals(0, javac.waitFor(), said);
    lib = Files.createDirectories(tmp.resolve("flink/lib"));
    Files.write(lib.resolve("log4j2.properties"), new byte[0]); // not a jar
    Files.createDirectories(lib.resolve("nested.jar")); // a directory is not a jar
    Manifest manifest = new Manifest();
    manifest.getMainAttributes().put(Attributes.Name.MANIFEST_VERSION, "1.0");
    manifest.getMainAttributes().put(Attributes.Name.IMPLEMENTATION_VERSION, "2.2.1");
    // Upper case, as java -cp's wildcard accepts.
    try (OutputStream file = Files.newOutputStream(lib.resolve("FLINK-DIST-2.2.1.JAR"));
        JarOutputStream jar = new JarOutputStream(file, manifest)) {
      String entry = COMPACTOR.replace('.', '/') + ".class";
      jar.putNextEntry(new JarEntry(entry));
      jar.write(Files.readAllBytes(classes.resolve(entry)));
      jar.closeEntry();
    }
  }

  @Test
  void wildcardDirectoryAndColonListFindWhatJavaFinds() throws Exception {
    String affected = "FLINK-39753 (ColumnFamilyOptions at ";
    for (String classPath :
        new String[] {
          lib + "/*", lib.toString(), tmp + "/missing.jar:" + lib + "/*:" + tmp.resolve("classes")
        }) {
      String out = knownLeaks(0, classPath);
      String line = lineOf(out, affected);
      assertTrue(line.endsWith("Flink 2.2.1: AFFECTED (fixed in: 1.20.5 and 2.3.0)"), line);
    }
    // The truth: java itself loads the class through the same wildcard.
    Path check = tmp.resolve("Check.java");
    Files.writeString(
        check,
        "public class Check { public static void main(String[] a) throws Exception {"
            + " System.out.print(Class.forName(\""
            + COMPACTOR
            + "\").getPackage()"
            + ".getImplementationVersion()); } }");
    Process java =
        new ProcessBuilder(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-cp",
                lib + "/*",
                check.toString())
            .redirectErrorStream(true)
            .start();
    String loaded = new String(java.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertEquals(0, java.waitFor(), loaded);
    assertEquals("2.2.1", loaded);
  }

  @Test
  void aDirectoryOfTooManyJarsIsRefusedWithWhatToDo() throws Exception {
    Path huge = Files.createDirectories(tmp.resolve("huge"));
    for (int i = 0; i <= ClassPathElements.MAX_JARS; i++) {
      Files.write(huge.resolve("j" + i + ".jar"), new byte[0]);
    }
    String err = knownLeaksErr(1, huge + "/*");
    assertTrue(err.contains("more than " + ClassPathElements.MAX_JARS + " jars"), err);
  }

  private static String lineOf(String out, String start) {
    for (String line : out.split("\n")) {
      if (line.startsWith(start)) {
        return line;
      }
    }
    throw new AssertionError("no line starting '" + start + "' in:\n" + out);
  }

  private static String knownLeaks(int exit, String classPath) {
    return run(exit, classPath)[0];
  }

  private static String knownLeaksErr(int exit, String classPath) {
    return run(exit, classPath)[1];
  }

  /** stdout and stderr of the command, which must exit with {@code exit}. */
  private static String[] run(int exit, String classPath) {
    CliRun run = CliRun.of("known-leaks", "--class-path", classPath);
    assertEquals(exit, run.exit, run.toString());
    return new String[] {run.out, run.err};
  }
}
