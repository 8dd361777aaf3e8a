package dev.nativemem.tests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.StringWriter;
import java.lang.module.ModuleDescriptor;
import java.lang.module.ModuleFinder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;
import javax.tools.JavaCompiler;
import javax.tools.ToolProvider;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The shipped jar is the module {@code dev.nativemem}: it exports the API (and its metric table)
 * only, so an application module reaches neither the bridge to the native library nor the tracker,
 * at compile time or by reflection; and it runs on the module path, the shaded libraries included.
 */
class ModuleDescriptorTest {
  private static final String APP =
      "package app;\n"
          + "public class Main {\n"
          + "  public static void main(String[] args) throws Exception {\n"
          + "    System.out.println(dev.nativemem.NativeMemory.version().java());\n"
          + "    try {\n"
          + "      Class.forName(\"dev.nativemem.internal.NativeBridge\")"
          + ".getMethod(\"version\").invoke(null);\n"
          + "      System.out.println(\"bridge reachable\");\n"
          + "    } catch (IllegalAccessException e) {\n"
          + "      System.out.println(\"bridge refused\");\n"
          + "    }\n"
          + "  }\n"
          + "}\n";

  @Test
  void exportsOnlyTheApiAndListsEveryPackageItHolds() {
    ModuleDescriptor module =
        ModuleFinder.of(ForkedJvm.JAR).find("dev.nativemem").orElseThrow().descriptor();
    Set<String> exported =
        module.exports().stream()
            .peek(e -> assertFalse(e.isQualified(), e.toString()))
            .map(ModuleDescriptor.Exports::source)
            .collect(Collectors.toSet());
    assertEquals(
        Set.of(
            "dev.nativemem",
            "dev.nativemem.base",
            "dev.nativemem.handles",
            "dev.nativemem.memory",
            "dev.nativemem.metrics",
            "dev.nativemem.profile",
            "dev.nativemem.watch"),
        exported);
    assertTrue(module.opens().isEmpty(), module.opens().toString());
    // The jar tool listed the shaded packages too: without them, their classes could not load.
    assertTrue(module.packages().contains("dev.nativemem.internal"), module.packages().toString());
    assertTrue(
        module.packages().contains("dev.nativemem.shaded.jackson.jr.ob"),
        module.packages().toString());
    assertTrue(module.packages().stream().allMatch(p -> p.startsWith("dev.nativemem")));
    // attach speaks HotSpot's protocol natively: a JRE without jdk.attach runs it.
    assertTrue(
        module.requires().stream().noneMatch(r -> r.name().equals("jdk.attach")),
        module.requires().toString());
    for (ModuleDescriptor.Requires requires : module.requires()) {
      boolean platform = requires.name().startsWith("java.");
      assertTrue(
          platform || requires.modifiers().contains(ModuleDescriptor.Requires.Modifier.STATIC),
          requires + ": only platform modules may be required at run time");
    }
  }

  @Test
  void runsOnTheModulePath() throws Exception {
    ForkedJvm.Result stats =
        new ForkedJvm()
            .jvmArg("--enable-native-access=dev.nativemem")
            .modulePath(List.of(), "-m", "dev.nativemem", "stats", "--json");
    assertEquals(0, stats.exitCode, stats.toString());
    assertTrue(stats.stdout.startsWith("{\"allocator\":"), stats.toString());
  }

  @Test
  void runsOnTheModulePathOfJdk25() throws Exception {
    Path jdk25 =
        Paths.get(
            System.getProperty("nativemem.jdk25", "/usr/lib/jvm/temurin-25-jdk-amd64"),
            "bin",
            "java");
    Assumptions.assumeTrue(Files.isExecutable(jdk25), "no JDK 25 at " + jdk25);
    ForkedJvm.Result version =
        new ForkedJvm()
            .java(jdk25)
            .jvmArg("--enable-native-access=dev.nativemem")
            .modulePath(List.of(), "-m", "dev.nativemem", "version");
    assertEquals(0, version.exitCode, version.toString());
    assertEquals("", version.stderr, "no restricted-method warning with native access enabled");
  }

  @Test
  void applicationModuleCannotCompileAgainstTheBridge(@TempDir Path dir) throws Exception {
    String bridgeCall =
        "package app;\n"
            + "class Sneak {\n"
            + "  static String v() { return dev.nativemem.internal.NativeBridge.version(); }\n"
            + "}\n";
    StringWriter diagnostics = new StringWriter();
    boolean compiled = compileApp(dir, diagnostics, bridgeCall);
    assertFalse(compiled, "compiled a call to NativeBridge from another module");
    assertTrue(
        diagnostics.toString().contains("package dev.nativemem.internal is not visible"),
        diagnostics.toString());
  }

  @Test
  void applicationModuleReachesTheApiButNotTheBridgeByReflection(@TempDir Path dir)
      throws Exception {
    StringWriter diagnostics = new StringWriter();
    assertTrue(compileApp(dir, diagnostics, null), diagnostics.toString());
    ForkedJvm.Result run =
        new ForkedJvm()
            .jvmArg("--enable-native-access=dev.nativemem")
            .modulePath(List.of(dir.resolve("out")), "-m", "app/app.Main");
    assertEquals(0, run.exitCode, run.toString());
    assertTrue(run.stdout.contains("bridge refused"), run.toString());
    assertFalse(run.stdout.contains("bridge reachable"), run.toString());
  }

  /**
   * Compiles module {@code app} (its {@code Main}, plus {@code extra} when given) against the jar.
   */
  private static boolean compileApp(Path dir, StringWriter diagnostics, String extra)
      throws Exception {
    Path src = dir.resolve("src/app");
    Files.createDirectories(src);
    Path moduleInfo = dir.resolve("src/module-info.java");
    Files.write(
        moduleInfo, "module app { requires dev.nativemem; }\n".getBytes(StandardCharsets.UTF_8));
    Path main = src.resolve("Main.java");
    Files.write(main, APP.getBytes(StandardCharsets.UTF_8));
    List<String> files = new java.util.ArrayList<>(List.of(moduleInfo.toString(), main.toString()));
    if (extra != null) {
      Path sneak = src.resolve("Sneak.java");
      Files.write(sneak, extra.getBytes(StandardCharsets.UTF_8));
      files.add(sneak.toString());
    }
    JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
    List<String> args =
        new java.util.ArrayList<>(
            List.of(
                "-p", ForkedJvm.JAR.toString(), "-d", dir.resolve("out").toString(), "-nowarn"));
    args.addAll(files);
    ByteArrayOutputStream errors = new ByteArrayOutputStream();
    int exit = javac.run(null, errors, errors, args.toArray(new String[0]));
    diagnostics.write(errors.toString(StandardCharsets.UTF_8));
    return exit == 0;
  }
}
