package dev.nativemem.tests;

import static dev.nativemem.tests.AllocatorTruthTest.MIB;
import static dev.nativemem.tests.AllocatorTruthTest.N;
import static dev.nativemem.tests.AllocatorTruthTest.assertPartsAddUp;
import static dev.nativemem.tests.AllocatorTruthTest.cast;
import static dev.nativemem.tests.AllocatorTruthTest.number;
import static dev.nativemem.tests.AllocatorTruthTest.object;
import static dev.nativemem.tests.AllocatorTruthTest.probe;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.jr.ob.JSON;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/** The breakdown and the advice against what the JVM and the allocator were told. */
class BreakdownTruthTest {

  @Test
  void nmtOnIsReadInProcessAndSeesTheNativeAllocation() throws Exception {
    ForkedJvm jvm =
        new ForkedJvm().withTestClasses().jvmArg("-Xint", "-XX:NativeMemoryTracking=summary");
    Map<String, Object> r = probe(jvm, "allocate", "" + MIB);
    Map<String, Object> before = object(r, "breakdown_before");
    Map<String, Object> after = object(r, "breakdown_after");
    Map<String, Object> nmtBefore = cast(object(before, "jvm").get("nmt"));
    Map<String, Object> nmtAfter = cast(object(after, "jvm").get("nmt"));
    assertTrue(
        number(nmtAfter, "committed_bytes") >= number(object(after, "jvm"), "heap_committed_bytes"),
        after.toString());
    // Direct buffers are malloc'd by the JVM: NMT's malloc total sees them too.
    long nmtMalloc = number(nmtAfter, "malloc_bytes") - number(nmtBefore, "malloc_bytes");
    assertTrue(Math.abs(nmtMalloc - N) <= N / 50, "NMT malloc grew by " + nmtMalloc);
    assertEquals("java_heap_resident", partNames(after).get(0), after.toString());
    assertTrue(partNames(after).contains("jvm_other_mmap_committed_nmt"), after.toString());
    assertPartsAddUp(after);
  }

  @Test
  void nmtOffAttributesPoolsAndAdvisesIt() throws Exception {
    Map<String, Object> r = probe(new ForkedJvm().withTestClasses(), "views");
    Map<String, Object> breakdown = object(r, "breakdown");
    assertNull(object(breakdown, "jvm").get("nmt"), breakdown.toString());
    assertEquals("java_heap_resident", partNames(breakdown).get(0));
    assertPartsAddUp(breakdown);
    assertTrue(adviceCodes(r).contains("NMT_OFF"), r.toString());
  }

  /**
   * A young JVM with a 512 MiB heap committed and barely touched: the resident view counts the heap
   * as the kernel's smaps lists it (read by the child itself, before and after), its parts add up
   * to RSS and leave a remainder at or above zero, where the committed view goes negative.
   */
  @ParameterizedTest(name = "{0}")
  @org.junit.jupiter.params.provider.ValueSource(
      strings = {"-XX:+UseG1GC", "-XX:+UseParallelGC", "-XX:+UseSerialGC"})
  void residentViewCountsTheHeapAsSmapsDoes(String collector) throws Exception {
    for (String nmt : new String[] {"off", "summary"}) {
      ForkedJvm jvm =
          new ForkedJvm()
              .withTestClasses()
              .jvmArg(collector, "-Xms512m", "-Xmx512m", "-XX:NativeMemoryTracking=" + nmt);
      Map<String, Object> r = probe(jvm, "resident");
      Map<String, Object> breakdown = object(r, "breakdown");
      String what = collector + ", NMT " + nmt + ": " + r;
      assertEquals("resident", breakdown.get("view"), what);
      assertEquals("java_heap_resident", partNames(breakdown).get(0), what);
      long heap = number(cast(((List<?>) breakdown.get("attributed")).get(0)), "bytes");
      long low = Math.min(number(r, "smaps_heap_rss_before"), number(r, "smaps_heap_rss_after"));
      long high = Math.max(number(r, "smaps_heap_rss_before"), number(r, "smaps_heap_rss_after"));
      assertTrue(heap >= low - (1 << 20) && heap <= high + (1 << 20), what);
      // The ranges are the heap's: what smaps lists as writable there is its committed part (and,
      // for Parallel and Serial, the survivor space the MXBean leaves out).
      long writable = number(r, "smaps_heap_writable_size");
      long committed = number(r, "heap_committed_bytes");
      assertTrue(writable >= committed && writable <= committed + committed / 20, what);
      assertTrue(heap < number(r, "heap_committed_bytes") / 2, "a young heap is mostly untouched");
      assertPartsAddUp(breakdown);
      // At or above zero up to what committed JVM structures have not touched: a few MiB.
      assertTrue(number(breakdown, "unaccounted_bytes") > -UNTOUCHED_TOLERANCE, what);
      assertTrue(number(r, "jmx_unaccounted_bytes") > -UNTOUCHED_TOLERANCE, what);
      assertTrue(
          number(object(r, "committed_breakdown"), "unaccounted_bytes") < -(128L << 20), what);
    }
  }

  /**
   * Committed JVM memory the resident view counts without measuring its pages (metaspace, class
   * space, thread stacks with NMT): what "unaccounted" may dip below zero.
   */
  static final long UNTOUCHED_TOLERANCE = 16L << 20;

  /**
   * Thread stacks belong to no allocator and no pool: without NMT the growth of RSS they cause
   * lands in "unaccounted", with NMT it is attributed. The heap is pre-touched so that committed
   * means resident.
   */
  @Test
  void threadStacksAreUnaccountedWithoutNmtAndAttributedWithIt() throws Exception {
    for (String nmt : new String[] {"off", "summary"}) {
      ForkedJvm jvm =
          new ForkedJvm()
              .withTestClasses()
              .jvmArg("-Xint", "-Xms32m", "-Xmx32m", "-XX:+AlwaysPreTouch")
              .jvmArg("-XX:NativeMemoryTracking=" + nmt);
      Map<String, Object> r = probe(jvm, "stacks", "32", "4000");
      Map<String, Object> before = object(r, "breakdown_before");
      Map<String, Object> after = object(r, "breakdown_after");
      long rss = number(after, "rss_bytes") - number(before, "rss_bytes");
      long unaccounted = number(after, "unaccounted_bytes") - number(before, "unaccounted_bytes");
      assertTrue(rss >= 8 << 20, nmt + ": 32 deep stacks grew RSS by only " + rss);
      long expected = nmt.equals("off") ? rss : 0;
      assertTrue(
          Math.abs(unaccounted - expected) <= rss / 5,
          nmt + ": RSS grew by " + rss + ", unaccounted by " + unaccounted);
      assertPartsAddUp(after);
    }
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("dev.nativemem.tests.AllocatorSetup#all")
  void containerCpusMatchTheJvmAndTheProcessMatchesProc(AllocatorSetup setup) throws Exception {
    Map<String, Object> r = probe(setup.jvm(), "views");
    Map<String, Object> breakdown = object(r, "breakdown");
    assertEquals(
        number(r, "available_processors"), number(object(breakdown, "cpus"), "effective"), "" + r);
    assertEquals(setup.kind, object(breakdown, "allocator").get("kind"));
    assertPartsAddUp(breakdown);
  }

  @Test
  void jemallocArenasSizedForMoreCpusThanTheContainerHasAreFlagged() throws Exception {
    ForkedJvm jvm = AllocatorSetup.jemallocs().findFirst().orElseThrow().jvm();
    Map<String, Object> r = probe(jvm.env("MALLOC_CONF", "narenas:64"), "views");
    assertEquals(64, number(object(object(r, "allocator"), "jemalloc"), "opt_narenas"));
    Map<String, Object> advice = advice(r, "JEMALLOC_ARENAS_EXCEED_CPUS");
    long cpus = number(r, "available_processors");
    assertEquals("MALLOC_CONF=narenas:" + 4 * cpus, advice.get("suggested_setting"), "" + r);
    assertEquals("warning", advice.get("severity"));
  }

  @Test
  void dirtyPagesNeverPurgedAreFlagged() throws Exception {
    ForkedJvm jvm = AllocatorSetup.jemallocs().findFirst().orElseThrow().jvm();
    Map<String, Object> r =
        probe(jvm.env("MALLOC_CONF", "dirty_decay_ms:-1,muzzy_decay_ms:-1"), "views", "96");
    assertTrue(number(object(r, "stats"), "dirty_bytes") >= 64L << 20, r.toString());
    Map<String, Object> advice = advice(r, "JEMALLOC_DIRTY_NEVER_PURGED");
    assertEquals("MALLOC_CONF=dirty_decay_ms:10000", advice.get("suggested_setting"));
    assertTrue(adviceCodes(r).contains("PROFILING_NOT_ENABLED_AT_START"), r.toString());
  }

  @Test
  void glibcArenaMaxIsAdvisedAndHonoured() throws Exception {
    Map<String, Object> unset = probe(new ForkedJvm().withTestClasses(), "views");
    Map<String, Object> advice = advice(unset, "GLIBC_ARENA_MAX_UNSET");
    assertTrue(((String) advice.get("suggested_setting")).startsWith("MALLOC_ARENA_MAX="));

    Map<String, Object> set =
        probe(new ForkedJvm().withTestClasses().env("MALLOC_ARENA_MAX", "2"), "views");
    assertTrue(!adviceCodes(set).contains("GLIBC_ARENA_MAX_UNSET"), set.toString());
    Map<String, Object> stats = object(set, "stats");
    assertEquals("2", stats.get("malloc_arena_max"));
    long arenas = number(stats, "arena_count");
    assertTrue(arenas >= 1 && arenas <= 2, "malloc_info counted " + arenas + " arenas");
  }

  static List<String> partNames(Map<String, Object> breakdown) {
    return ((List<?>) breakdown.get("attributed"))
        .stream().map(p -> (String) cast(p).get("name")).collect(Collectors.toList());
  }

  static List<String> adviceCodes(Map<String, Object> r) throws Exception {
    List<String> codes = new ArrayList<>();
    for (Object a : (List<?>) r.get("advice")) {
      codes.add((String) JSON.std.mapFrom(a).get("code"));
    }
    return codes;
  }

  static Map<String, Object> advice(Map<String, Object> r, String code) throws Exception {
    for (Object a : (List<?>) r.get("advice")) {
      Map<String, Object> advice = JSON.std.mapFrom(a);
      if (code.equals(advice.get("code"))) {
        return advice;
      }
    }
    assertNotNull(null, code + " not advised: " + r.get("advice"));
    return Map.of();
  }
}
