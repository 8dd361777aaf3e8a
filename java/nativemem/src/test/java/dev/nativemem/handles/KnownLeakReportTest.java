package dev.nativemem.handles;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.nativemem.base.Advice;
import dev.nativemem.handles.advice.HandleAdvice;
import dev.nativemem.internal.Json;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * A report whose site matches a catalogue entry names it beside the site: text, JSON and advice.
 * The site is planted as the registry would hand it over, with the stack of a resource stream read
 * and dropped at a known line.
 */
class KnownLeakReportTest {
  private static final String READER = "com.example.App.read(App.java:7)";

  private static HandleReport report(String kind, String stack) {
    String json =
        "{\"kinds\": [{\"kind\": \""
            + kind
            + "\", \"created\": 3, \"closed\": 0, \"transferred\": 0, \"open\": 0, \"pooled\": 0,"
            + " \"leaked\": 3}], \"sites\": [{\"kind\": \""
            + kind
            + "\", \"open\": 0, \"pooled\": 0, \"leaked\": 3,"
            + " \"freed_by_finalizer\": 0, \"last_freed_by_finalizer_epoch_ms\": null, \"stack\": "
            + Json.write(stack)
            + "}], \"zombie_caches\": [], \"oldest_open\": [], \"open_cache_capacity_bytes\": 0,"
            + " \"zombie_cache_capacity_bytes\": 0, \"sites_dropped\": 0, \"sites_kept\": 1,"
            + " \"tracker_memory_bytes\": 0}";
    return HandleReportReader.read(true, "level=full", Json.parseObject(json), 0);
  }

  private static final String STREAM_STACK =
      "created at "
          + READER
          + "\n\tat java.base/java.util.zip.Inflater.<init>(Inflater.java:120)\n"
          + "\tat java.base/java.net.URLClassLoader.getResourceAsStream(URLClassLoader.java:290)\n"
          + "\tat app//"
          + READER
          + "\n";

  @Test
  void aCataloguedSiteIsNamedInTextJsonAndAdvice() {
    HandleReport report = report("Inflater", STREAM_STACK);
    HandleReport.Site site = report.sites().get(0);
    assertEquals("unclosed-getResourceAsStream", site.knownLeakId());
    assertTrue(
        report.toString().contains("created at " + READER + " [known leak: a stream from"),
        report.toString());
    assertTrue(
        report.toString().contains("unclosed-getResourceAsStream: costs: one zlib inflate stream"),
        report.toString());
    Map<String, Object> known =
        Json.object(Json.objects(Json.parseObject(report.toJson()), "sites").get(0), "known");
    assertEquals("unclosed-getResourceAsStream", known.get("id"));
    assertEquals("your code", known.get("library"));
    List<String> leaked =
        HandleAdvice.evaluate(report).stream()
            .filter(a -> a.code().equals("HANDLES_LEAKED"))
            .map(Advice::message)
            .collect(Collectors.toList());
    assertEquals(1, leaked.size(), leaked.toString());
    assertTrue(leaked.get(0).contains(READER + ": a known leak"), leaked.get(0));
    assertTrue(leaked.get(0).contains("(unclosed-getResourceAsStream; fixed in: your code)"));
    assertTrue(leaked.get(0).contains("do now: close the stream where it is read"), leaked.get(0));
  }

  /** FLINK-39753's suggestion is what an operator can change: the catalogue's workaround. */
  @Test
  void aKnownLeaksSuggestionIsItsWorkaround() {
    String compactor =
        "org.apache.flink.state.rocksdb.sstmerge.Compactor.compact(Compactor.java:54)";
    HandleReport report =
        report(
            "ColumnFamilyOptions",
            "created at "
                + compactor
                + "\n\tat org.rocksdb.ColumnFamilyOptions.<init>(ColumnFamilyOptions.java:60)\n"
                + "\tat org.rocksdb.ColumnFamilyDescriptor.getOptions(ColumnFamilyDescriptor.java:9)\n"
                + "\tat "
                + compactor
                + "\n");
    assertEquals("FLINK-39753", report.sites().get(0).knownLeakId());
    List<Advice> leaked = leakedAdvice(report);
    assertEquals(1, leaked.size(), leaked.toString());
    assertEquals(
        "upgrade to Flink 1.20.5 or 2.3.0; until then disable manual compaction with"
            + " state.backend.rocksdb.manual-compaction.min-interval: 0",
        leaked.get(0).suggestedSetting());
    assertTrue(!leaked.get(0).toString().contains("close() them"), leaked.get(0).toString());
  }

  /**
   * ReadOptions leaked without a recorded site are named as RocksJava's own (its {@code
   * defaultReadOptions_}), with nothing for the application to close.
   */
  @Test
  void unsitedReadOptionsAreNamedAsRocksJavasOwn() {
    String json =
        "{\"kinds\": [{\"kind\": \"ReadOptions\", \"created\": 2, \"closed\": 0,"
            + " \"transferred\": 0, \"open\": 0, \"pooled\": 0, \"leaked\": 2}],"
            + " \"sites\": [], \"zombie_caches\": [], \"oldest_open\": [],"
            + " \"open_cache_capacity_bytes\": 0, \"zombie_cache_capacity_bytes\": 0,"
            + " \"sites_dropped\": 0, \"sites_kept\": 0, \"tracker_memory_bytes\": 0}";
    HandleReport report = HandleReportReader.read(true, "level=sampled", Json.parseObject(json), 0);
    List<Advice> leaked = leakedAdvice(report);
    assertEquals(1, leaked.size(), leaked.toString());
    String message = leaked.get(0).message();
    assertTrue(message.startsWith("2 ReadOptions leaked"), message);
    assertTrue(message.contains("RocksJava leaks ReadOptions of its own"), message);
    assertTrue(message.contains("defaultReadOptions_, facebook/rocksdb#15036"), message);
    assertTrue(!message.contains("close each one"), message);
    assertEquals("", leaked.get(0).suggestedSetting());
  }

  private static List<Advice> leakedAdvice(HandleReport report) {
    return HandleAdvice.evaluate(report).stream()
        .filter(a -> a.code().equals("HANDLES_LEAKED"))
        .collect(Collectors.toList());
  }

  @Test
  void anotherKindAtTheSameFramesIsNotNamed() {
    HandleReport report = report("Deflater", STREAM_STACK);
    assertNull(report.sites().get(0).knownLeakId());
    assertTrue(!report.toJson().contains("\"known"), report.toJson()); // nulls are not written
  }

  @Test
  void anUnknownCatalogueIdIsRefusedWithTheIds() {
    IllegalArgumentException e =
        assertThrows(IllegalArgumentException.class, () -> KnownLeak.catalogued("FLINK-1"));
    assertTrue(e.getMessage().contains("FLINK-39753"), e.getMessage());
  }
}
