package dev.nativemem.tests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.jr.ob.JSON;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Under the bundled allocator a bundle carries the heap profile, its sidecar and analysis, and the
 * diff against the previous bundle, which shows what was allocated between the two: zlib's {@code
 * inflateInit2_} under 4,000 new Inflaters.
 */
class WatchProfileTest {
  @TempDir Path dir;

  @SuppressWarnings("unchecked")
  @Test
  void bundlesCarryTheProfileAndTheGrowthSinceThePreviousOne() throws Exception {
    ForkedJvm.Result r =
        new ForkedJvm()
            .withTestClasses()
            .env("LD_PRELOAD", ForkedJvm.OWN_JEMALLOC.toString())
            .main(WatchProfileChild.class.getName(), dir.toString());
    assertEquals(0, r.exitCode, r.toString());
    List<Path> bundles = new ArrayList<>();
    for (String line : r.stdout.split("\n")) {
      if (line.startsWith("BUNDLE ")) {
        bundles.add(Paths.get(line.substring(7)));
      }
    }
    assertEquals(2, bundles.size(), r.toString());
    Path second = bundles.get(1);
    for (String file :
        List.of(
            "profile.heap",
            "profile-report.json",
            "profile-flame.svg",
            "profile.pb.gz",
            "profile-diff.json",
            "allocator-report.json")) {
      assertTrue(Files.isRegularFile(second.resolve(file), LinkOption.NOFOLLOW_LINKS), file);
    }
    assertTrue(Files.isDirectory(second.resolve("profile.heap.symbols")));
    Map<String, Object> manifest =
        JSON.std.mapFrom(Files.readString(second.resolve("manifest.json")));
    assertEquals(bundles.get(0).getFileName().toString(), manifest.get("previous_bundle"));
    Map<String, Object> diff =
        JSON.std.mapFrom(Files.readString(second.resolve("profile-diff.json")));
    List<Map<String, Object>> top = (List<Map<String, Object>>) diff.get("top_cumulative");
    assertTrue(
        String.valueOf(top).contains("inflateInit2_"),
        "the growth between the bundles is under zlib's inflateInit2_: " + top);
  }
}
