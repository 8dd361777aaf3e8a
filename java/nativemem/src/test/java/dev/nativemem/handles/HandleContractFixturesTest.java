package dev.nativemem.handles;

import static dev.nativemem.ContractFixtures.check;

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
}
