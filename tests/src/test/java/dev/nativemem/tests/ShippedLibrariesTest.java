package dev.nativemem.tests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.zip.ZipEntry;
import java.util.zip.ZipFile;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The jar ships its native libraries without DWARF but with their symbol tables, so frames in heap
 * profiles keep their function names; the DWARF is in the {@code debug} artifact, by build id.
 * Checked with binutils (readelf, nm), independently of our own ELF reading.
 */
class ShippedLibrariesTest {
  private static final String NATIVE_DIR = "dev/nativemem/native/";
  private static final String[] FILES = {"libnativemem.so", "libnativemem_jemalloc.so"};

  /** Each library the jar carries, as {@code <platform>/<file>}: linux-aarch64 when built. */
  private static final List<String> LIBRARIES = new ArrayList<>();

  private static final Path DEBUG_JAR =
      Paths.get(ForkedJvm.BUILT_JAR.toString().replaceFirst("\\.jar$", "-debug.jar"));

  @TempDir static Path dir;

  @BeforeAll
  static void unpack() throws IOException {
    Assumptions.assumeTrue(
        ForkedJvm.onPath("readelf") && ForkedJvm.onPath("nm"),
        "binutils (readelf, nm) is not on PATH; it comes with gcc, which the build needs");
    try (ZipFile jar = new ZipFile(ForkedJvm.JAR.toFile())) {
      for (String platform : List.of("linux-x86_64", "linux-aarch64")) {
        if (platform.equals("linux-aarch64")
            && jar.getEntry(NATIVE_DIR + platform + "/" + FILES[0]) == null) {
          continue; // built without the aarch64 cross toolchain (Arm64Runtime's cells say so)
        }
        Files.createDirectories(dir.resolve(platform));
        for (String file : FILES) {
          String library = platform + "/" + file;
          ZipEntry entry = jar.getEntry(NATIVE_DIR + library);
          assertTrue(entry != null, library + " is missing from " + ForkedJvm.JAR);
          try (InputStream in = jar.getInputStream(entry)) {
            Files.copy(in, dir.resolve(library));
          }
          LIBRARIES.add(library);
        }
      }
    }
    try (ZipFile debug = new ZipFile(DEBUG_JAR.toFile())) {
      for (ZipEntry entry : java.util.Collections.list(debug.entries())) {
        if (!entry.isDirectory()) {
          Path target = dir.resolve("debug").resolve(entry.getName());
          Files.createDirectories(target.getParent());
          try (InputStream in = debug.getInputStream(entry)) {
            Files.copy(in, target);
          }
        }
      }
    }
  }

  @Test
  void librariesShipWithoutDwarfButWithTheirSymbolTables() throws Exception {
    for (String library : LIBRARIES) {
      String sections = run("readelf", "-SW", dir.resolve(library).toString());
      assertFalse(sections.contains(".debug_info"), library + " still carries DWARF");
      assertTrue(sections.contains(".symtab"), library + " lost its symbol table");
    }
  }

  @Test
  void debugArtifactHoldsEachLibrarysDwarfUnderItsBuildId() throws Exception {
    for (String library : LIBRARIES) {
      Path debugFile = debugFile(library);
      assertTrue(
          Files.isRegularFile(debugFile), library + ": no " + debugFile + " in " + DEBUG_JAR);
      assertTrue(
          run("readelf", "-SW", debugFile.toString()).contains(".debug_info"),
          debugFile + " has no DWARF");
    }
  }

  /** Stripping keeps every function name at its address: profiles name the same functions. */
  @Test
  void strippedLibrariesNameEveryFunctionTheUnstrippedOnesName() throws Exception {
    for (String library : LIBRARIES) {
      TreeSet<String> shipped = functions(dir.resolve(library));
      TreeSet<String> unstripped = functions(debugFile(library));
      assertTrue(unstripped.size() > 1000, library + ": only " + unstripped.size() + " functions");
      assertEquals(unstripped, shipped, library + ": function symbols differ after stripping");
    }
  }

  /** Both architectures' libraries included. */
  @Test
  void jarStaysSmall() throws IOException {
    long size = Files.size(ForkedJvm.JAR);
    assertTrue(size <= 8L << 20, ForkedJvm.JAR + " is " + size + " bytes, over 8 MiB");
  }

  private static Path debugFile(String library) throws Exception {
    Matcher id =
        Pattern.compile("Build ID: ([0-9a-f]+)")
            .matcher(run("readelf", "-n", dir.resolve(library).toString()));
    assertTrue(id.find(), library + " has no build id");
    String hex = id.group(1);
    return dir.resolve("debug/.build-id")
        .resolve(hex.substring(0, 2))
        .resolve(hex.substring(2) + ".debug");
  }

  /** Function symbols ("address name") of an object's symbol table, as nm lists them. */
  private static TreeSet<String> functions(Path object) throws Exception {
    TreeSet<String> functions = new TreeSet<>();
    String nm =
        run("readelf", "-h", object.toString()).contains("AArch64") ? "aarch64-linux-gnu-nm" : "nm";
    for (String line : run(nm, "--defined-only", object.toString()).split("\n")) {
      String[] parts = line.trim().split(" ", 3);
      if (parts.length == 3 && (parts[1].equals("T") || parts[1].equals("t"))) {
        functions.add(parts[0] + " " + parts[2]);
      }
    }
    return functions;
  }

  private static String run(String... command) throws IOException, InterruptedException {
    List<String> args = new ArrayList<>(List.of(command));
    Process process = new ProcessBuilder(args).redirectErrorStream(true).start();
    byte[] out = process.getInputStream().readAllBytes();
    assertTrue(process.waitFor(60, TimeUnit.SECONDS), "timed out: " + args);
    assertEquals(0, process.exitValue(), args + ": " + new String(out, StandardCharsets.UTF_8));
    return new String(out, StandardCharsets.UTF_8);
  }
}
