package dev.nativemem.incident;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.nativemem.internal.Json;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** The edge samples of a timeline read in two passes are the ones a whole parse would find. */
class TimelineEdgesTest {
  @Test
  void edgesAreTheFirstAndLastSampleOfEachKeyAndGiveTheVerdictOfTheWholeTimeline()
      throws IOException {
    Random random = new Random(42);
    List<Object> samples = new ArrayList<>();
    for (int i = 0; i < 3600; i++) {
      Map<String, Object> s = new LinkedHashMap<>();
      s.put("t", 1_764_538_800_000L + i * 1000L);
      // Unknown at the start and now and then, as a timeline's figures are.
      s.put("limit", i < 10 || random.nextInt(50) == 0 ? null : 512L << 20);
      s.put("usage", i < 5 || i > 3590 ? null : 100_000_000L + i * 10_000L);
      s.put("rss", 90_000_000L + random.nextInt(1000));
      s.put("handles_open", i < 100 ? null : (long) i);
      s.put("handles_leaked", i < 100 ? null : (long) i / 100);
      s.put("psi_some_avg10", null);
      s.put("nested", Map.of("usage", 1)); // read past, never taken for a figure
      samples.add(s);
    }
    Map<String, Object> timeline = new LinkedHashMap<>();
    timeline.put("schema", "nativemem-timeline/1");
    timeline.put("samples", samples);
    timeline.put("after", List.of(1, 2, 3));
    byte[] bytes = Json.write(timeline).getBytes(StandardCharsets.UTF_8);

    List<Map<String, Object>> edges = TimelineEdges.read(bytes, Verdict.TIMELINE_KEYS);
    List<Map<String, Object>> whole =
        Fields.objects(Json.parseObject(Json.write(timeline)), "samples");
    // first and last usage (5, 3590), limit (10, 3599), handles (100, 3599), t and rss (0, 3599)
    List<Long> times = new ArrayList<>();
    for (Map<String, Object> e : edges) {
      times.add((Fields.whole(e, "t") - 1_764_538_800_000L) / 1000);
    }
    assertEquals(List.of(0L, 5L, 10L, 100L, 3590L, 3599L), times);

    Verdict.Growth g = Verdict.growth(edges);
    Verdict.Growth w = Verdict.growth(whole);
    assertEquals(
        List.of(w.label, w.from, w.to, w.millis, w.limit),
        List.of(g.label, g.from, g.to, g.millis, g.limit));
    Verdict.Headroom h = Verdict.headroom(edges);
    Verdict.Headroom hw = Verdict.headroom(whole);
    assertEquals(List.of(hw.limit, hw.usage), List.of(h.limit, h.usage));
    Verdict.HandleGrowth hg = Verdict.handleGrowth(edges);
    Verdict.HandleGrowth hgw = Verdict.handleGrowth(whole);
    assertEquals(
        List.of(hgw.openFrom, hgw.openTo, hgw.leakedFrom, hgw.leakedTo),
        List.of(hg.openFrom, hg.openTo, hg.leakedFrom, hg.leakedTo));
  }

  @Test
  void noSamplesGiveNoEdgesAndNotJsonIsRefused() throws IOException {
    assertEquals(List.of(), TimelineEdges.read(utf8("{\"schema\":\"x\"}"), Verdict.TIMELINE_KEYS));
    assertEquals(List.of(), TimelineEdges.read(utf8("{\"samples\":[]}"), Verdict.TIMELINE_KEYS));
    assertThrows(IOException.class, () -> TimelineEdges.read(utf8("[1]"), Verdict.TIMELINE_KEYS));
    assertThrows(
        IOException.class,
        () -> TimelineEdges.read(utf8("{\"samples\":[{\"t\":"), Verdict.TIMELINE_KEYS));
  }

  private static byte[] utf8(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }
}
