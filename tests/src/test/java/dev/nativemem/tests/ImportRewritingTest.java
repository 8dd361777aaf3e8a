package dev.nativemem.tests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.nativemem.profile.ProfileRequest;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The import-rewriting engine in JVMs on plain glibc, no {@code LD_PRELOAD}, against independent
 * truths: a library loaded after profiling started is covered from its first allocation (RocksDB's
 * own block-cache accounting).
 */
class ImportRewritingTest {
  /** Frames of the path that reads a block from a table file and puts it in the block cache. */
  private static final List<String> CACHE_FILL_FRAMES =
      List.of("MaybeReadBlockAndLoadToCache", "PutDataBlockToCache", "ReadBlockContents");

  @TempDir Path tmp;

  /**
   * Profiling starts before rocksdbjni is extracted and loaded; the bytes the dump puts under
   * RocksDB's block-cache fill path agree with {@code rocksdb.block-cache-usage} within 10%.
   */
  @Test
  void blockCacheOfALibraryLoadedAfterTheStartIsAttributed() throws Exception {
    Path dump = tmp.resolve("cache.heap");
    ForkedJvm.Result r =
        new ForkedJvm()
            .classPath(
                java.nio.file.Paths.get(
                    org.rocksdb.RocksDB.class
                        .getProtectionDomain()
                        .getCodeSource()
                        .getLocation()
                        .toURI()))
            .withTestClasses()
            .main(
                BlockCacheChild.class.getName(),
                tmp.resolve("db").toString(),
                dump.toString(),
                "4096");
    assertEquals(0, r.exitCode, r.toString());
    assertEquals("import-rewriting", HeapProfilingTest.line(r, "ENGINE"), r.toString());
    assertEquals("false", HeapProfilingTest.line(r, "LOADED_BEFORE"), r.toString());
    assertEquals("true", HeapProfilingTest.line(r, "LOADED_AFTER"), r.toString());
    assertTrue(
        Long.parseLong(HeapProfilingTest.line(r, "HOOKED_AFTER"))
            > Long.parseLong(HeapProfilingTest.line(r, "HOOKED_BEFORE")),
        "loading rocksdbjni hooked its imports: " + r);
    long usage = Long.parseLong(HeapProfilingTest.line(r, "USAGE"));
    assertTrue(usage > 16L << 20, "the cache holds only " + usage + " B: it was not filled");

    String collapsed =
        ProfileRequest.of(dump)
            .render(ProfileRequest.Format.COLLAPSED)
            .run()
            .rendered(ProfileRequest.Format.COLLAPSED);
    long underCacheFill =
        collapsed
            .lines()
            .filter(l -> CACHE_FILL_FRAMES.stream().anyMatch(l::contains))
            .mapToLong(l -> Long.parseLong(l.substring(l.lastIndexOf(' ') + 1)))
            .sum();
    System.out.printf(
        "block cache: rocksdb.block-cache-usage %d B, the profile %d B (%.3f)%n",
        usage, underCacheFill, (double) underCacheFill / usage);
    assertEquals(
        1.0,
        (double) underCacheFill / usage,
        0.10,
        "profile "
            + underCacheFill
            + " B under the block-cache fill path, rocksdb.block-cache-usage "
            + usage
            + " B; the dump's stacks:\n"
            + collapsed.lines().limit(40).reduce("", (a, b) -> a + b + "\n"));
  }
}
