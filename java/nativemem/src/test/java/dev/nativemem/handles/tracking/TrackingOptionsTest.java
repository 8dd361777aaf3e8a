package dev.nativemem.handles.tracking;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.nativemem.base.TrackingLevel;
import java.nio.file.Paths;
import java.util.List;
import java.util.Properties;
import org.junit.jupiter.api.Test;

class TrackingOptionsTest {
  @Test
  void defaultsAreSampledOneIn128() {
    TrackingOptions options = TrackingOptions.parse(null, new Properties());
    assertEquals(TrackingLevel.SAMPLED, options.level());
    assertEquals(128, options.interval());
    assertEquals(null, options.reportFile());
    assertTrue(options.tracks("ColumnFamilyOptions", "rocksdb"));
  }

  @Test
  void systemPropertiesApplyAndAgentArgumentsWin() {
    Properties properties = new Properties();
    properties.setProperty("nativemem.handles.level", "counts");
    properties.setProperty("nativemem.handles.interval", "7");
    properties.setProperty("nativemem.handles.report", "/tmp/x.json");
    TrackingOptions fromProperties = TrackingOptions.parse("", properties);
    assertEquals(TrackingLevel.COUNTS, fromProperties.level());
    assertEquals(7, fromProperties.interval());
    assertEquals(Paths.get("/tmp/x.json"), fromProperties.reportFile());
    TrackingOptions agentWins = TrackingOptions.parse("level=full,interval=3", properties);
    assertEquals(TrackingLevel.FULL, agentWins.level());
    assertEquals(3, agentWins.interval());
  }

  @Test
  void skipPrefixesFromPropertyOrAgentArgument() {
    Properties properties = new Properties();
    properties.setProperty("nativemem.handles.skip", "com.example.db.");
    assertEquals(
        java.util.List.of("com.example.db."), TrackingOptions.parse(null, properties).skip());
    TrackingOptions agent = TrackingOptions.parse("skip=com.example.Wrapper+org.acme.", properties);
    assertEquals(java.util.List.of("com.example.Wrapper", "org.acme."), agent.skip());
    assertTrue(agent.toString().endsWith(",skip=com.example.Wrapper+org.acme."), agent.toString());
  }

  @Test
  void includeAndExcludeByKindAndGroup() {
    TrackingOptions zipOnly = TrackingOptions.parse("include=zip", new Properties());
    assertTrue(zipOnly.tracks("Inflater", "zip"));
    assertFalse(zipOnly.tracks("Statistics", "rocksdb"));
    assertTrue(zipOnly.tracksGroup("zip"));
    assertFalse(zipOnly.tracksGroup("rocksdb"));
    TrackingOptions noStats = TrackingOptions.parse("exclude=Statistics", new Properties());
    assertFalse(noStats.tracks("Statistics", "rocksdb"));
    assertTrue(noStats.tracks("ColumnFamilyOptions", "rocksdb"));
    TrackingOptions kinds = TrackingOptions.parse("include=Statistics+Inflater", new Properties());
    assertTrue(kinds.tracksGroup("rocksdb"));
    assertTrue(kinds.tracksGroup("zip"));
    assertFalse(kinds.tracks("Deflater", "zip"));
    assertFalse(TrackingOptions.parse("level=off", new Properties()).tracksGroup("zip"));
  }

  @Test
  void badOptionsSayWhatIsValid() {
    IllegalArgumentException unknown =
        assertThrows(
            IllegalArgumentException.class,
            () -> TrackingOptions.parse("levle=full", new Properties()));
    assertTrue(unknown.getMessage().contains("unknown option 'levle'"), unknown.getMessage());
    assertTrue(unknown.getMessage().contains("level, interval, include, exclude, report"));
    assertThrows(
        IllegalArgumentException.class,
        () -> TrackingOptions.parse("interval=0", new Properties()));
    assertThrows(
        IllegalArgumentException.class,
        () -> TrackingOptions.parse("level=most", new Properties()));
  }

  @Test
  void knownLeaksByCatalogueIdOrKind() {
    Properties properties = new Properties();
    properties.setProperty("nativemem.handles.known", "Deflater");
    assertEquals(List.of("Deflater"), TrackingOptions.parse(null, properties).known());
    TrackingOptions both = TrackingOptions.parse("known=FLINK-39923+Inflater", properties);
    assertEquals(List.of("FLINK-39923", "Inflater"), both.known());
    assertTrue(both.toString().endsWith(",known=FLINK-39923+Inflater"), both.toString());
  }

  @Test
  void anIdTheCatalogueLacksIsRefusedNotTakenForAKind() {
    for (String typo : List.of("FLINK-3992", "facebook/rocksdb#1")) {
      IllegalArgumentException e =
          assertThrows(
              IllegalArgumentException.class,
              () -> TrackingOptions.parse("known=" + typo, new Properties()));
      assertTrue(e.getMessage().contains("no entry '" + typo + "'"), e.getMessage());
      assertTrue(e.getMessage().contains("FLINK-39923"), e.getMessage());
    }
  }
}
