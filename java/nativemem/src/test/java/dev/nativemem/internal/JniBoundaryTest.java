package dev.nativemem.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.nativemem.NativeMemory;
import dev.nativemem.Versions;
import dev.nativemem.base.AllocatorUnavailableException;
import dev.nativemem.base.NativeMemoryException;
import dev.nativemem.memory.AllocatorInfo;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Errors and panics in the native library arrive as Java exceptions; the JVM lives on. */
class JniBoundaryTest {

  @Test
  void panicBecomesExceptionAndJvmLivesOn() {
    NativeMemoryException e =
        assertThrows(NativeMemoryException.class, () -> NativeBridge.selfTestPanic("boom 42"));
    assertTrue(e.getMessage().contains("self-test panic: boom 42"), e.getMessage());
    assertTrue(e.getMessage().contains("please report"), e.getMessage());
    // The library keeps working after the panic, many times over.
    for (int i = 0; i < 3; i++) {
      assertThrows(NativeMemoryException.class, () -> NativeBridge.selfTestPanic("again"));
    }
    assertTrue(NativeMemory.processMemory().rssBytes() > 0);
  }

  @Test
  void mallctlOnGlibcNamesTheFix() {
    // Surefire forks this JVM without LD_PRELOAD: glibc serves malloc.
    AllocatorUnavailableException e =
        assertThrows(
            AllocatorUnavailableException.class, () -> NativeMemory.mallctl("opt.narenas"));
    assertTrue(e.getMessage().contains("'opt.narenas'"), e.getMessage());
    assertTrue(e.getMessage().contains("LD_PRELOAD="), e.getMessage());
    assertEquals(AllocatorInfo.Kind.GLIBC, NativeMemory.allocator().kind());
  }

  @Test
  void nullArgumentsAreRejectedOnBothSides() {
    assertThrows(NullPointerException.class, () -> NativeMemory.mallctl(null));
    IllegalArgumentException e =
        assertThrows(IllegalArgumentException.class, () -> NativeBridge.selfTestPanic(null));
    assertTrue(e.getMessage().contains("must not be null"), e.getMessage());
  }

  @Test
  void residentRangesRejectBadPairsAndCountNothingUnmapped() {
    NativeMemory.version();
    assertThrows(IllegalArgumentException.class, () -> NativeBridge.residentRangesJson(null));
    assertThrows(
        IllegalArgumentException.class, () -> NativeBridge.residentRangesJson(new long[] {1}));
    // Page 0 is never mapped: no count, no crash; an empty range counts zero.
    assertEquals(
        "{\"resident_bytes\":[null,0]}",
        NativeBridge.residentRangesJson(new long[] {0, 4096, 8192, 8192}));
  }

  @Test
  void memorySnapshotRejectsBadPairsAndCountsItsRangesAsResidentRangesDoes() {
    NativeMemory.version();
    assertThrows(IllegalArgumentException.class, () -> NativeBridge.memorySnapshotJson(null));
    assertThrows(
        IllegalArgumentException.class, () -> NativeBridge.memorySnapshotJson(new long[] {1}));
    Map<String, Object> snapshot =
        Json.parseObject(NativeBridge.memorySnapshotJson(new long[] {0, 4096, 8192, 8192}));
    assertEquals(Arrays.asList(null, 0), snapshot.get("resident_bytes"));
    assertEquals(
        Json.string(Json.object(snapshot, "stats"), "kind"),
        Json.string(Json.object(Json.object(snapshot, "native_view"), "allocator"), "kind"));
    assertEquals(
        List.of(),
        Json.parseObject(NativeBridge.memorySnapshotJson(new long[0])).get("resident_bytes"));
  }

  @Test
  void handleRegistryRejectsNegativeIdsAndCountsAndNullStacks() {
    IllegalArgumentException counted =
        assertThrows(
            IllegalArgumentException.class, () -> NativeBridge.handlesCounted(0, 0, -1, 0, 0));
    assertTrue(counted.getMessage().contains("created must not be negative"), counted.getMessage());
    IllegalArgumentException reassigned =
        assertThrows(
            IllegalArgumentException.class, () -> NativeBridge.handlesReassign(-1, 0, 0, false));
    assertTrue(
        reassigned.getMessage().contains("handle must not be negative"), reassigned.getMessage());
    IllegalArgumentException leakedIntoPool =
        assertThrows(IllegalArgumentException.class, () -> NativeBridge.handlesLeakedIntoPool(-1));
    assertTrue(
        leakedIntoPool.getMessage().contains("handle must not be negative"),
        leakedIntoPool.getMessage());
    IllegalArgumentException stack =
        assertThrows(
            IllegalArgumentException.class, () -> NativeBridge.handlesInternSiteOfStack(null));
    assertTrue(stack.getMessage().contains("must not be null"), stack.getMessage());
    // A stack never bound to a site is new (-1), and this JVM offers JVMTI (not -2).
    assertEquals(-1, NativeBridge.handlesSiteOfStack());
  }

  @Test
  void versionsMatch() {
    Versions v = NativeMemory.version();
    assertEquals(v.java(), v.nativeLibrary());
    assertTrue(v.libraryPath().endsWith("libnativemem.so"), v.libraryPath());
  }
}
