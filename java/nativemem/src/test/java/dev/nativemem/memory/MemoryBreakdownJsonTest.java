package dev.nativemem.memory;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import dev.nativemem.handles.NativeHandles;
import dev.nativemem.internal.Json;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** {@link MemoryBreakdown#toJson()}'s keys: the native view written back whole, the JVM's parts. */
class MemoryBreakdownJsonTest {
  @Test
  void theNativeViewIsWrittenBackAsTheNativeLibraryWroteIt() throws IOException {
    Map<String, Object> view = nativeView();
    Map<String, Object> json = breakdownJson(view);
    // As text, so that the keys' order is the native library's too.
    assertEquals(Json.write(view.get("process")), Json.write(json.get("process")));
    assertEquals(Json.write(view.get("container_memory")), Json.write(json.get("container")));
    assertEquals(Json.write(view.get("container_cpus")), Json.write(json.get("cpus")));
    assertEquals(Json.write(view.get("allocator")), Json.write(json.get("allocator")));
  }

  @Test
  void partsAndPoolsKeepTheirKeys() throws IOException {
    Map<String, Object> json = breakdownJson(nativeView());
    List<Map<String, Object>> parts = Json.objects(json, "attributed");
    assertFalse(parts.isEmpty());
    for (Map<String, Object> part : parts) {
      assertEquals(Set.of("name", "bytes"), part.keySet());
    }
    Map<String, Object> jvm = Json.object(json, "jvm");
    for (Map<String, Object> pool : Json.objects(jvm, "non_heap_pools")) {
      assertEquals(List.of("name", "used_bytes", "committed_bytes"), List.copyOf(pool.keySet()));
    }
    for (Map<String, Object> pool : Json.objects(jvm, "buffer_pools")) {
      assertEquals(
          List.of("name", "count", "used_bytes", "capacity_bytes"), List.copyOf(pool.keySet()));
    }
  }

  private static Map<String, Object> breakdownJson(Map<String, Object> view) {
    MemoryBreakdown breakdown =
        MemoryBreakdownReader.read(
            view, null, NativeHandles.summary(), MemoryBreakdown.View.COMMITTED);
    return Json.parseObject(breakdown.toJson());
  }

  private static Map<String, Object> nativeView() throws IOException {
    try (InputStream in =
        MemoryBreakdownJsonTest.class.getResourceAsStream(
            "/dev/nativemem/contract/native-view.json")) {
      return Json.parseObject(new String(in.readAllBytes(), StandardCharsets.UTF_8));
    }
  }
}
