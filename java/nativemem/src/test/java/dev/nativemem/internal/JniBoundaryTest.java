package dev.nativemem.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.nativemem.NativeMemory;
import dev.nativemem.base.NativeMemoryException;
import dev.nativemem.memory.AllocatorInfo;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Errors and panics in the native library arrive as Java exceptions; the JVM lives on. */
class JniBoundaryTest {

  @Test
  void panicBecomesExceptionAndJvmLivesOn() {
    NativeMemoryException e = assertThrows(NativeMemoryException.class, () -> panic("boom 42"));
    assertTrue(e.getMessage().contains("self-test panic: boom 42"), e.getMessage());
    assertTrue(e.getMessage().contains("please report"), e.getMessage());
    // The library keeps working after the panic, many times over.
    for (int i = 0; i < 3; i++) {
      assertThrows(NativeMemoryException.class, () -> panic("again"));
    }
    assertTrue(NativeMemory.processMemory().rssBytes() > 0);
  }

  @Test
  void mallctlOnGlibcNamesTheFix() {
    // Surefire forks this JVM without LD_PRELOAD: glibc serves malloc.
    NativeMemoryException e =
        assertThrows(NativeMemoryException.class, () -> NativeMemory.mallctl("opt.narenas"));
    assertTrue(e.getMessage().contains("'opt.narenas'"), e.getMessage());
    assertTrue(e.getMessage().contains("LD_PRELOAD="), e.getMessage());
    assertEquals(AllocatorInfo.Kind.GLIBC, NativeMemory.allocator().kind());
  }

  @Test
  void nullArgumentsAreRejectedOnBothSides() {
    assertThrows(NullPointerException.class, () -> NativeMemory.mallctl(null));
    IllegalArgumentException e =
        assertThrows(
            IllegalArgumentException.class, () -> NativeBridge.call("allocator", (String) null));
    assertTrue(e.getMessage().contains("request must not be null"), e.getMessage());
    e = assertThrows(IllegalArgumentException.class, () -> NativeBridge.call(null, "{}"));
    assertTrue(e.getMessage().contains("job must not be null"), e.getMessage());
  }

  @Test
  void anUnknownJobOrKeyOrAMalformedRequestIsRefusedSayingWhatIsAccepted() {
    NativeMemory.version();
    IllegalArgumentException unknown =
        assertThrows(IllegalArgumentException.class, () -> NativeBridge.call("alocator"));
    assertTrue(unknown.getMessage().contains("no job 'alocator'"), unknown.getMessage());
    assertTrue(unknown.getMessage().contains("allocator_stats"), unknown.getMessage());
    IllegalArgumentException key =
        assertThrows(
            IllegalArgumentException.class,
            () -> NativeBridge.call("set_decay", Map.of("dirty_ms", 1, "muzy_ms", 1)));
    assertTrue(key.getMessage().contains("a malformed 'set_decay' request"), key.getMessage());
    assertTrue(key.getMessage().contains("muzy_ms"), key.getMessage());
    assertThrows(IllegalArgumentException.class, () -> NativeBridge.call("allocator", "{"));
    assertThrows(IllegalArgumentException.class, () -> NativeBridge.call("allocator", "[]"));
  }

  @Test
  void everyJobJavaCallsIsOneTheLibraryRuns() throws java.io.IOException {
    NativeMemory.version();
    List<Object> jobs = Json.parseList(NativeBridge.call("jobs"));
    java.util.regex.Pattern called =
        java.util.regex.Pattern.compile("\\b(?:call|callForNumber)\\(\\s*\"([a-z0-9_]+)\"");
    java.nio.file.Path sources = java.nio.file.Paths.get("src/main/java");
    java.util.Set<String> asked = new java.util.TreeSet<>();
    try (java.util.stream.Stream<java.nio.file.Path> files = java.nio.file.Files.walk(sources)) {
      for (java.nio.file.Path file : (Iterable<java.nio.file.Path>) files::iterator) {
        if (file.toString().endsWith(".java")) {
          java.util.regex.Matcher m = called.matcher(java.nio.file.Files.readString(file));
          while (m.find()) {
            asked.add(m.group(1));
          }
        }
      }
    }
    assertTrue(asked.size() >= 25, "the sources call " + asked);
    for (String job : asked) {
      assertTrue(jobs.contains(job), "Java calls the job '" + job + "', which is not in " + jobs);
    }
  }

  private static void panic(String message) {
    NativeBridge.call("self_test_panic", Map.of("message", message));
  }

  @Test
  void handleRegistryRejectsNegativeIdsAndCountsAndNullStacks() {
    IllegalArgumentException counted =
        assertThrows(
            IllegalArgumentException.class,
            () ->
                NativeBridge.call(
                    "handles_counted",
                    Map.of("kind", 0, "site", 0, "created", -1, "closed", 0, "leaked", 0)));
    assertTrue(counted.getMessage().contains("'handles_counted'"), counted.getMessage());
    assertTrue(counted.getMessage().contains("-1"), counted.getMessage());
    IllegalArgumentException reassigned =
        assertThrows(
            IllegalArgumentException.class, () -> NativeBridge.handlesReassign(-1, 0, 0, false));
    assertTrue(
        reassigned.getMessage().contains("handle must not be negative"), reassigned.getMessage());
    IllegalArgumentException leakedIntoPool =
        assertThrows(
            IllegalArgumentException.class,
            () -> NativeBridge.call("handle_leaked_into_pool", Map.of("handle", -1)));
    assertTrue(leakedIntoPool.getMessage().contains("-1"), leakedIntoPool.getMessage());
    IllegalArgumentException stack =
        assertThrows(
            IllegalArgumentException.class,
            () -> NativeBridge.call("handle_site_of_stack", "{\"stack\":null}"));
    assertTrue(stack.getMessage().contains("'handle_site_of_stack'"), stack.getMessage());
    // A stack never bound to a site is new (-1), and this JVM offers JVMTI (not -2).
    assertEquals(-1, NativeBridge.handlesSiteOfStack());
  }

  @Test
  void versionsMatch() {
    NativeMemory.Versions v = NativeMemory.version();
    assertEquals(v.java(), v.nativeLibrary());
    assertTrue(v.libraryPath().endsWith("libnativemem.so"), v.libraryPath());
  }
}
