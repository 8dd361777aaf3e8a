package dev.nativemem.tests;

import static dev.nativemem.tests.AllocatorTruthTest.assertPartsAddUp;
import static dev.nativemem.tests.AllocatorTruthTest.number;
import static dev.nativemem.tests.AllocatorTruthTest.object;
import static dev.nativemem.tests.AllocatorTruthTest.probe;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Map;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/** {@code dev.nativemem:type=NativeMemory} as a JMX client sees it. */
class JmxTest {

  @ParameterizedTest(name = "{0}")
  @MethodSource("dev.nativemem.tests.AllocatorSetup#all")
  void mbeanRegisteredByPropertyAgreesWithTheFacade(AllocatorSetup setup) throws Exception {
    Map<String, Object> r = probe(setup.jvm().jvmArg("-Dnativemem.jmx=true"), "jmx");
    assertEquals(false, r.get("registered_before_use"), r.toString());
    assertEquals(true, r.get("registered"), r.toString());
    assertEquals(setup.kind, r.get("kind"));
    long jmx = number(r, "jmx_allocated_bytes");
    long direct = number(r, "stats_allocated_bytes");
    assertTrue(Math.abs(jmx - direct) < 4 << 20, "JMX " + jmx + " vs stats() " + direct);
    long rss = number(r, "rss_bytes");
    assertTrue(Math.abs(number(r, "jmx_rss_bytes") - rss) < 8 << 20, r.toString());
    if (setup.isJemalloc()) {
      assertTrue(number(r, "jmx_resident_bytes") > 0, r.toString());
    } else {
      assertEquals(-1, number(r, "jmx_resident_bytes"), "glibc has no resident figure");
    }
    assertPartsAddUp(object(r, "breakdown"));
    Map<String, Object> scraped = object(r, "scrape_breakdown");
    assertEquals(number(scraped, "rss_bytes"), number(r, "scrape_rss_bytes"), r.toString());
    assertEquals(
        number(scraped, "unaccounted_bytes"), number(r, "scrape_unaccounted_bytes"), r.toString());
    Map<String, Object> purge = object(r, "purge");
    assertEquals(setup.isJemalloc() ? "purge" : "trim", purge.get("remedy"));
  }
}
