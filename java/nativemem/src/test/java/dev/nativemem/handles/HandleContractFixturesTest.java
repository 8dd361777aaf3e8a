package dev.nativemem.handles;

import static dev.nativemem.ContractFixtures.check;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.nativemem.ContractFixtures;
import dev.nativemem.base.NativeMemoryException;
import dev.nativemem.internal.Json;
import org.junit.jupiter.api.Test;

/**
 * The JSON contract with the native library for {@code dev.nativemem.handles}: see {@link
 * dev.nativemem.ContractFixtures}.
 */
class HandleContractFixturesTest {
  @Test
  void handleReport() {
    check(
        "handle-report.json",
        json -> HandleReportReader.read(true, "level=full", json, 0),
        // Not modelled in Java yet: a cache's capacity on its open-handle record.
        "oldest_open[].capacity_bytes");
  }

  @Test
  void handleSummary() {
    check("handle-summary.json", json -> HandleReportReader.summary(true, "level=full", json));
  }

  /** A key of a site renamed in the registry fails the binding, which names it. */
  @Test
  void aRenamedKeyIsNamed() {
    String renamed =
        ContractFixtures.text("handle-report.json")
            .replace("\"freed_by_finalizer\":", "\"finalized\":");
    NativeMemoryException e =
        assertThrows(
            NativeMemoryException.class,
            () -> HandleReportReader.read(true, "level=full", Json.parseObject(renamed), 0));
    assertTrue(e.getMessage().contains("'freed_by_finalizer' of Site is missing"), e.getMessage());
  }
}
