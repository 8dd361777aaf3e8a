package dev.nativemem.tests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.jr.ob.JSON;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/** {@code stats}, {@code breakdown} and {@code advice} as a user runs them. */
class MemoryCommandsCliTest {

  @ParameterizedTest(name = "{0}")
  @MethodSource("dev.nativemem.tests.AllocatorSetup#all")
  void statsBreakdownAndAdvice(AllocatorSetup setup) throws Exception {
    ForkedJvm.Result stats = setup.jvm().cli("stats");
    assertEquals(0, stats.exitCode, stats.toString());
    assertTrue(stats.stdout.startsWith("allocator  " + setup.kind + " "), stats.toString());

    ForkedJvm.Result json = setup.jvm().cli("stats", "--json");
    Map<String, Object> parsed = JSON.std.mapFrom(json.stdout);
    assertEquals(setup.kind, AllocatorTruthTest.cast(parsed.get("stats")).get("kind"));

    ForkedJvm.Result report = setup.jvm().cli("stats", "--raw");
    assertEquals(0, report.exitCode, report.toString());
    if (setup.isJemalloc()) {
      // malloc_stats_print's JSON, from the jemalloc that serves malloc (jemalloc 5.3 writes
      // the key "stats_print" twice under "opt").
      Map<String, Object> printed =
          JSON.std.without(JSON.Feature.FAIL_ON_DUPLICATE_MAP_KEYS).mapFrom(report.stdout);
      assertTrue(printed.containsKey("jemalloc"), report.stdout.substring(0, 200));
    } else {
      assertTrue(report.stdout.startsWith("<malloc version=\"1\">"), report.toString());
    }

    ForkedJvm.Result table = setup.jvm().cli("breakdown");
    assertEquals(0, table.exitCode, table.toString());
    // A breakdown loads no JMX: its JVM's metaspace stays small and "unaccounted" may be KiB.
    for (String row : new String[] {"RSS", "heap committed", "allocated", "unaccounted"}) {
      assertTrue(
          table.stdout.matches("(?s).*\\n  " + row + " +-?(\\d+\\.\\d [KMG]iB|\\d+ B)\\n.*"),
          row + table);
    }
    Map<String, Object> resident = JSON.std.mapFrom(setup.jvm().cli("breakdown", "--json").stdout);
    assertEquals("resident", resident.get("view"), resident.toString());
    AllocatorTruthTest.assertPartsAddUp(resident);
    Map<String, Object> committed =
        JSON.std.mapFrom(setup.jvm().cli("breakdown", "--json", "--committed").stdout);
    assertEquals("committed", committed.get("view"), committed.toString());
    AllocatorTruthTest.assertPartsAddUp(committed);

    ForkedJvm.Result advice = setup.jvm().cli("advice", "--json");
    assertEquals(0, advice.exitCode, advice.toString());
    List<Object> list = JSON.std.listFrom(advice.stdout);
    for (Object a : list) {
      Map<String, Object> item = AllocatorTruthTest.cast(a);
      assertTrue(
          item.keySet().containsAll(List.of("code", "severity", "message", "suggested_setting")));
    }
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("dev.nativemem.tests.AllocatorSetup#all")
  void demoShowsBreakdownAndAdvice(AllocatorSetup setup) throws Exception {
    ForkedJvm.Result demo = setup.jvm().jar(ForkedJvm.DEMO_JAR, "demo");
    assertEquals(0, demo.exitCode, demo.toString());
    assertTrue(demo.stdout.contains("Where the memory is"), demo.toString());
    assertTrue(demo.stdout.contains("Advice"), demo.toString());
    assertTrue(demo.stdout.contains("unaccounted"), demo.toString());
  }
}
