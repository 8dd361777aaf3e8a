package dev.nativemem.tests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.jr.ob.JSON;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The allocator's figures against independent truth, in child JVMs under each allocator: a known
 * number of MiB allocated (proved by the JDK's direct buffer pool and by RSS), purges seen by the
 * dirty page count, and bad input.
 */
class AllocatorTruthTest {
  static final int MIB = 64;
  static final long N = (long) MIB << 20;

  @ParameterizedTest(name = "{0}")
  @MethodSource("dev.nativemem.tests.AllocatorSetup#all")
  void allocatingNMiBMovesAllocatedByN(AllocatorSetup setup) throws Exception {
    // -Xint: no JIT compiler threads allocating arenas while we measure.
    Map<String, Object> r = probe(setup.jvm().jvmArg("-Xint"), "allocate", "" + MIB);
    assertEquals(N, number(r, "direct_pool_delta_bytes"), "the JDK's own count of what we did");
    Map<String, Object> before = object(r, "stats_before");
    Map<String, Object> after = object(r, "stats_after");
    assertEquals(setup.kind, after.get("kind"), r.toString());
    long grown = number(after, "allocated_bytes") - number(before, "allocated_bytes");
    assertTrue(Math.abs(grown - N) <= N / 100, "allocated grew by " + grown + ", expected " + N);

    Map<String, Object> breakdownBefore = object(r, "breakdown_before");
    Map<String, Object> breakdownAfter = object(r, "breakdown_after");
    long rssGrown = number(breakdownAfter, "rss_bytes") - number(breakdownBefore, "rss_bytes");
    assertTrue(rssGrown >= N * 9 / 10, "zeroed buffers are resident: RSS grew by " + rssGrown);
    if (setup.isJemalloc()) {
      long resident = number(after, "resident_bytes");
      assertTrue(resident <= number(r, "rss_after_bytes"), "jemalloc resident ≤ RSS: " + r);
      assertTrue(resident >= number(after, "active_bytes") - (4 << 20), r.toString());
      assertFalse(((List<?>) after.get("arenas")).isEmpty(), r.toString());
    } else {
      // glibc is labelled glibc and carries no jemalloc figure.
      for (String jemallocKey : new String[] {"resident_bytes", "arenas", "dirty_bytes"}) {
        assertFalse(after.containsKey(jemallocKey), jemallocKey + " in glibc stats: " + after);
      }
      assertNull(object(breakdownAfter, "allocator").get("resident_bytes"), r.toString());
    }
    // The new memory is attributed (malloc'd), not left unaccounted.
    long unaccountedMoved =
        number(breakdownAfter, "unaccounted_bytes") - number(breakdownBefore, "unaccounted_bytes");
    assertTrue(Math.abs(unaccountedMoved) < N / 10, "unaccounted moved by " + unaccountedMoved);
    for (Map<String, Object> b : List.of(breakdownBefore, breakdownAfter)) {
      assertPartsAddUp(b);
    }
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("dev.nativemem.tests.AllocatorSetup#jemallocs")
  void purgeLeavesNearlyNoDirtyPages(AllocatorSetup setup) throws Exception {
    Map<String, Object> r = probe(setup.jvm(), "free-then-purge", "" + MIB);
    Map<String, Object> freed = object(r, "stats_freed");
    Map<String, Object> purged = object(r, "stats_purged");
    // 10 s decay: most of what was just freed is still dirty.
    assertTrue(number(freed, "dirty_bytes") >= N / 2, "dirty after free: " + freed);
    assertTrue(number(purged, "dirty_bytes") <= 1 << 20, "dirty after purge: " + purged);
    Map<String, Object> purge = object(r, "purge");
    long residentDrop =
        number(purge, "allocator_resident_before_bytes")
            - number(purge, "allocator_resident_after_bytes");
    // The purge gives back what was dirty, and the kernel agrees: RSS falls by what jemalloc says
    // it released, less what the JVM itself grew meanwhile (a few MiB at most).
    // Decay (background threads) may already have returned part of the dirty pages between the
    // reading after the free and the purge: those left resident and dirty alike, before the purge.
    long slack = 4 << 20;
    long dirtyBefore = number(freed, "dirty_bytes");
    long releasedMeanwhile =
        Math.max(
            0, number(freed, "resident_bytes") - number(purge, "allocator_resident_before_bytes"));
    assertTrue(
        residentDrop >= dirtyBefore - releasedMeanwhile - slack,
        "resident dropped by "
            + residentDrop
            + ", dirty was "
            + dirtyBefore
            + " of which decay released "
            + releasedMeanwhile
            + " before the purge: "
            + purge);
    long rssDrop = number(purge, "rss_before_bytes") - number(purge, "rss_after_bytes");
    assertTrue(
        rssDrop >= residentDrop - slack,
        "RSS dropped by " + rssDrop + ", jemalloc released " + residentDrop + ": " + purge);
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("dev.nativemem.tests.AllocatorSetup#all")
  void badInputGetsExceptionsThatSayWhatToDo(AllocatorSetup setup) throws Exception {
    Map<String, Object> r = probe(setup.jvm(), "bad-input");
    for (String key : new String[] {"decay_too_low", "decay_too_high"}) {
      Map<String, Object> e = object(r, key);
      assertEquals("IllegalArgumentException", e.get("class"), r.toString());
      assertTrue(((String) e.get("message")).contains("-1 (never purge)"), r.toString());
    }
    if (setup.isJemalloc()) {
      for (String key : new String[] {"purge", "set_decay", "background", "flush"}) {
        assertEquals("ok", object(r, key).get("class"), key + ": " + r);
      }
      assertEquals("NativeMemoryException", object(r, "trim").get("class"), r.toString());
      assertTrue(((String) object(r, "trim").get("message")).contains("use 'purge'"), r + "");
      assertTrue(
          ((String) object(r, "unknown_key").get("message")).contains("stats.no_such_key"), r + "");
    } else {
      for (String key : new String[] {"purge", "set_decay", "background", "flush", "unknown_key"}) {
        Map<String, Object> e = object(r, key);
        assertEquals("NativeMemoryException", e.get("class"), key + ": " + r);
        assertTrue(((String) e.get("message")).contains("LD_PRELOAD"), key + ": " + r);
      }
      assertEquals("ok", object(r, "trim").get("class"), r.toString());
    }
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("dev.nativemem.tests.AllocatorSetup#all")
  void thirtyTwoThreadsAtOnce(AllocatorSetup setup) throws Exception {
    Map<String, Object> r = probe(setup.jvm(), "concurrent", "32");
    assertEquals(List.of(), r.get("errors"), r.toString());
    assertEquals(32, number(r, "ok"));
    assertEquals(setup.kind, object(r, "stats_after").get("kind"));
  }

  static void assertPartsAddUp(Map<String, Object> breakdown) throws Exception {
    long parts = 0;
    for (Object part : (List<?>) breakdown.get("attributed")) {
      parts += number(cast(part), "bytes");
    }
    assertEquals(number(breakdown, "attributed_bytes"), parts, breakdown.toString());
    assertEquals(
        number(breakdown, "rss_bytes"),
        parts + number(breakdown, "unaccounted_bytes"),
        breakdown.toString());
    long processRss = number(object(breakdown, "process"), "rss_bytes");
    assertEquals(processRss, number(breakdown, "rss_bytes"));
  }

  static Map<String, Object> probe(ForkedJvm jvm, String... args) throws Exception {
    ForkedJvm.Result result = jvm.main("dev.nativemem.tests.AllocatorProbe", args);
    assertEquals(0, result.exitCode, result.toString());
    String[] lines = result.stdout.strip().split("\n");
    return JSON.std.mapFrom(lines[lines.length - 1]);
  }

  static long number(Map<String, Object> json, String key) {
    Object value = json.get(key);
    assertTrue(value instanceof Number, key + " missing in " + json);
    return ((Number) value).longValue();
  }

  /** A nested object, or an object carried as JSON text (snapshots' toJson()). */
  static Map<String, Object> object(Map<String, Object> json, String key) throws Exception {
    Object value = json.get(key);
    if (value instanceof String) {
      return JSON.std.mapFrom(value);
    }
    return cast(value);
  }

  @SuppressWarnings("unchecked")
  static Map<String, Object> cast(Object value) {
    assertTrue(value instanceof Map, "not an object: " + value);
    return (Map<String, Object>) value;
  }
}
