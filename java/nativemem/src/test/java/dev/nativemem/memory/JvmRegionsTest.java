package dev.nativemem.memory;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.nativemem.NativeMemory;
import dev.nativemem.internal.Json;
import dev.nativemem.internal.NativeBridge;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The native jobs that count the JVM's regions, asked as {@link JvmRegions} asks them. */
class JvmRegionsTest {

  @Test
  void residentRangesRejectBadPairsAndCountNothingUnmapped() {
    NativeMemory.version();
    assertThrows(IllegalArgumentException.class, () -> NativeBridge.call("resident_ranges", "{}"));
    assertThrows(
        IllegalArgumentException.class,
        () -> NativeBridge.call("resident_ranges", "{\"ranges\":[[1]]}"));
    assertThrows(
        IllegalArgumentException.class,
        () -> NativeBridge.call("resident_ranges", JvmRegions.rangesRequestOf(new long[2050])));
    // Page 0 is never mapped: no count, no crash; an empty range counts zero.
    assertEquals(
        "{\"resident_bytes\":[null,0]}",
        NativeBridge.call("resident_ranges", JvmRegions.rangesRequestOf(0, 4096, 8192, 8192)));
  }

  @Test
  void memorySnapshotRejectsBadPairsAndCountsItsRangesAsResidentRangesDoes() {
    NativeMemory.version();
    assertThrows(IllegalArgumentException.class, () -> NativeBridge.call("memory_snapshot", "{}"));
    assertThrows(
        IllegalArgumentException.class,
        () -> NativeBridge.call("memory_snapshot", "{\"ranges\":[[1]]}"));
    Map<String, Object> snapshot =
        Json.parseObject(
            NativeBridge.call("memory_snapshot", JvmRegions.rangesRequestOf(0, 4096, 8192, 8192)));
    assertEquals(Arrays.asList(null, 0), snapshot.get("resident_bytes"));
    assertEquals(
        Json.string(Json.object(snapshot, "stats"), "kind"),
        Json.string(Json.object(Json.object(snapshot, "native_view"), "allocator"), "kind"));
    assertEquals(
        List.of(),
        Json.parseObject(NativeBridge.call("memory_snapshot", JvmRegions.rangesRequestOf()))
            .get("resident_bytes"));
  }
}
