package dev.nativemem.memory;

import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.nativemem.ContractFixtures;
import dev.nativemem.handles.NativeHandles;
import dev.nativemem.internal.Json;
import org.junit.jupiter.api.Test;

/** {@link MemoryBreakdown#toString()}: the table people read, from the native view's figures. */
class MemoryBreakdownTextTest {
  @Test
  void theTableShowsTheNativeViewsFiguresAndTheAttribution() {
    MemoryBreakdown breakdown =
        MemoryBreakdownReader.read(
            Json.parseObject(ContractFixtures.text("native-view.json")),
            null,
            NativeHandles.summary(),
            MemoryBreakdown.View.COMMITTED);
    String table = breakdown.toString();
    for (String row :
        new String[] {
          "Container (cgroup v2 /app.slice/app.service)",
          "limit (set at /app.slice)",
          "CPUs",
          "2 (affinity 8, quota 2.00)",
          "300.0 MiB    29.3%", // RSS: 300 MiB of the 1 GiB limit
          "Allocator (jemalloc)",
          "RSS attributed (committed view)",
          "malloc'd (jemalloc allocated)                   80.0 MiB",
          "jemalloc fragmentation, dirty pages, metadata    30.0 MiB", // 110 − 80 MiB
          "unaccounted",
          "624.0 MiB    60.9%", // headroom: 1 GiB − 400 MiB
        }) {
      assertTrue(table.contains(row), "no '" + row + "' in\n" + table);
    }
  }
}
