package dev.nativemem.handles;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.nativemem.base.Advice;
import dev.nativemem.handles.advice.HandleAdvice;
import dev.nativemem.internal.Json;
import java.util.List;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * Advice tells a user to close handles only where the application created them: open handles whose
 * site was not recorded may be a library's (a loader's pool, a cache), so their advice says how to
 * find out whose they are.
 */
class UnknownSiteAdviceTest {
  private static final String NOT_SAMPLED =
      "(creation stack not sampled: level=sampled records 1 in 128; use level=full to see every"
          + " site)";
  private static final String APP_SITE =
      "created at com.example.App.read(App.java:7)\n"
          + "\tat java.base/java.util.zip.Inflater.<init>(Inflater.java:120)\n"
          + "\tat app//com.example.App.read(App.java:7)\n";

  private static HandleReport report(long open, String stack) {
    String json =
        "{\"kinds\": [{\"kind\": \"Inflater\", \"created\": "
            + open
            + ", \"closed\": 0, \"transferred\": 0, \"open\": "
            + open
            + ", \"pooled\": 0, \"leaked\": 0}], \"sites\": [{\"kind\":"
            + " \"Inflater\", \"open\": "
            + open
            + ", \"pooled\": 0, \"leaked\": 0,"
            + " \"freed_by_finalizer\": 0, \"last_freed_by_finalizer_epoch_ms\": null, \"stack\": "
            + Json.write(stack)
            + "}], \"zombie_caches\": [], \"oldest_open\": [], \"open_cache_capacity_bytes\": 0,"
            + " \"zombie_cache_capacity_bytes\": 0, \"sites_dropped\": 0, \"sites_kept\": 1,"
            + " \"tracker_memory_bytes\": 0}";
    return HandleReportReader.read(true, "level=sampled", Json.parseObject(json), 0);
  }

  private static List<Advice> open(HandleReport report) {
    return HandleAdvice.evaluate(report).stream()
        .filter(a -> a.code().equals("HANDLES_OPEN"))
        .collect(Collectors.toList());
  }

  @Test
  void manyOpenWithoutASiteAreNotTheUsersToClose() {
    List<Advice> advice = open(report(165, NOT_SAMPLED));
    assertEquals(1, advice.size(), advice.toString());
    String message = advice.get(0).message();
    assertFalse(message.contains("close them"), message);
    assertTrue(message.startsWith("165 Inflater open"), message);
    assertTrue(message.contains("whose they are is not known"), message);
    // level=full is advised with what it costs
    assertTrue(message.contains("level=full (it keeps the creation stack"), message);
    assertTrue(message.contains("at most 16 MiB of native memory"), message);
    assertTrue(
        advice.get(0).suggestedSetting().contains("level=full"), advice.get(0).suggestedSetting());
  }

  @Test
  void manyOpenAtTheApplicationsLineAreToCloseThere() {
    List<Advice> advice = open(report(165, APP_SITE));
    assertEquals(1, advice.size(), advice.toString());
    assertTrue(
        advice.get(0).message().contains("com.example.App.read(App.java:7)"),
        advice.get(0).message());
    assertTrue(advice.get(0).message().contains("close them"), advice.get(0).message());
  }
}
