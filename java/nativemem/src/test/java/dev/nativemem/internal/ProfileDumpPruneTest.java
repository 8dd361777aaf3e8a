package dev.nativemem.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** dumpProfile() keeps the newest default-named dumps and never touches other files. */
class ProfileDumpPruneTest {

  @Test
  void keepsTheNewestDefaultNamedDumpsWithTheirSidecars(@TempDir Path dir) throws Exception {
    // Two processes, interleaved in time; the stamp, not the pid, orders them.
    String[] stamps = {
      "20261130T010000.000Z", "20261130T010001.000Z", "20261130T010002.000Z", "20261130T010003.000Z"
    };
    for (int i = 0; i < stamps.length; i++) {
      Path dump =
          Files.createFile(
              dir.resolve("nativemem-" + (i % 2 == 0 ? 900 : 12) + "-" + stamps[i] + ".heap"));
      Path sidecar = Files.createDirectory(dir.resolve(dump.getFileName() + ".symbols"));
      Files.createFile(sidecar.resolve("symbols.json"));
    }
    Files.createFile(dir.resolve("app.heap"));
    Files.createFile(dir.resolve("nativemem-1-latest.heap"));

    ProfileDump.prune(dir.resolve("nativemem-12-20261130T010003.000Z.heap"), 2);

    assertEquals(
        List.of(
            "app.heap",
            "nativemem-1-latest.heap",
            "nativemem-12-20261130T010003.000Z.heap",
            "nativemem-12-20261130T010003.000Z.heap.symbols",
            "nativemem-900-20261130T010002.000Z.heap",
            "nativemem-900-20261130T010002.000Z.heap.symbols"),
        names(dir));
  }

  @Test
  void keepingZeroStillKeepsTheDumpJustWritten(@TempDir Path dir) throws Exception {
    Files.createFile(dir.resolve("nativemem-7-20261130T010000.000Z.heap"));
    Files.createFile(dir.resolve("nativemem-7-20261130T010001.000Z.heap"));
    ProfileDump.prune(dir.resolve("nativemem-7-20261130T010001.000Z.heap"), 0);
    assertEquals(List.of("nativemem-7-20261130T010001.000Z.heap"), names(dir));
  }

  private static List<String> names(Path dir) throws Exception {
    try (Stream<Path> list = Files.list(dir)) {
      return list.map(p -> p.getFileName().toString()).sorted().collect(Collectors.toList());
    }
  }
}
