package dev.nativemem.profile;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.nativemem.internal.FileOwnership;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** dumpProfile() keeps the newest default-named dumps and never touches other files. */
class ProfileDumpPruneTest {
  private static final int NOBODY = 65534;

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

  /**
   * Case 3 of issue 11: in a shared directory another user plants default-named files dated in the
   * future; they must neither push our fresh dump out nor be deleted (as root, they would be).
   */
  @Test
  void filesOfOtherUsersNeitherCountNorGetDeleted(@TempDir Path dir) throws Exception {
    assumeTrue(FileOwnership.processUid() == 0, "needs root to give files to another user");
    for (int i = 0; i < 20; i++) {
      Path planted =
          Files.createFile(dir.resolve("nativemem-1-299901" + (10 + i) + "T000000.000Z.heap"));
      Files.setAttribute(planted, "unix:uid", NOBODY, LinkOption.NOFOLLOW_LINKS);
    }
    Path plantedSidecar =
        Files.createDirectory(dir.resolve("nativemem-1-29990110T000000.000Z.heap.symbols"));
    Files.setAttribute(plantedSidecar, "unix:uid", NOBODY, LinkOption.NOFOLLOW_LINKS);
    Files.createFile(dir.resolve("nativemem-5-20261130T000000.000Z.heap"));
    Path fresh = Files.createFile(dir.resolve("nativemem-5-20261130T010000.000Z.heap"));

    ProfileDump.prune(fresh, 1);

    List<String> left = names(dir);
    assertTrue(left.contains(fresh.getFileName().toString()), "our fresh dump was deleted");
    assertFalse(left.contains("nativemem-5-20261130T000000.000Z.heap"), "our old dump stayed");
    assertEquals(22, left.size(), "another user's files were deleted: " + left);
  }

  private static List<String> names(Path dir) throws Exception {
    try (Stream<Path> list = Files.list(dir)) {
      return list.map(p -> p.getFileName().toString()).sorted().collect(Collectors.toList());
    }
  }
}
