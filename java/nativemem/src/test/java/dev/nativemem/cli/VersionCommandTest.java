package dev.nativemem.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.nativemem.internal.Json;
import dev.nativemem.internal.NativeLibraryLoader;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class VersionCommandTest {
  /**
   * {@code version --json} is the versions value's own JSON: the jar's and the native library's
   * versions agree, the library's file is the one loaded, and the runtime is this JVM as it names
   * itself; {@code version} and {@code --version} print the same two lines.
   */
  @Test
  void theJsonAndTheTextNameTheSameVersionsAndThisRuntime() {
    CliRun json = CliRun.of("version", "--json");
    assertEquals(0, json.exit, json.toString());
    Map<String, Object> versions = Json.parseObject(json.out);
    assertEquals(
        List.of("java", "native_library", "library_path", "java_runtime", "java_vm", "java_home"),
        List.copyOf(versions.keySet()));
    assertEquals(NativeLibraryLoader.javaVersion(), versions.get("java"));
    assertEquals(versions.get("java"), versions.get("native_library"));
    assertEquals(NativeLibraryLoader.loadedPath().toString(), versions.get("library_path"));
    assertEquals(System.getProperty("java.runtime.version"), versions.get("java_runtime"));
    assertEquals(System.getProperty("java.home"), versions.get("java_home"));

    CliRun text = CliRun.of("version");
    assertEquals(0, text.exit, text.toString());
    assertTrue(
        text.out.startsWith(
            "nativemem "
                + versions.get("java")
                + " (native "
                + versions.get("native_library")
                + ", "
                + versions.get("library_path")
                + ")\nJava "
                + versions.get("java_runtime")
                + " ("),
        text.out);
    assertEquals(text.out, CliRun.of("--version").out);
  }
}
