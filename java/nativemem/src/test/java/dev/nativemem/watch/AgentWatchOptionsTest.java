package dev.nativemem.watch;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.nativemem.handles.tracking.TrackingOptions;
import dev.nativemem.watch.starting.WatchStart;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.Properties;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The agent's {@code watch=} and {@code watch.<name>=} arguments are the watch's settings. */
class AgentWatchOptionsTest {
  @Test
  void watchKeysBecomeTheWatchsProperties() {
    Properties system = new Properties();
    system.setProperty("nativemem.watch.keep", "4");
    TrackingOptions options =
        TrackingOptions.parse("level=full,watch=on,watch.dir=/data/incidents,watch.keep=2", system);
    Properties watch = options.watchSettings();
    assertEquals("on", watch.getProperty("nativemem.watch"));
    Properties merged = new Properties();
    merged.putAll(system);
    merged.putAll(watch);
    WatchOptions o = WatchOptions.from(merged);
    assertEquals(Paths.get("/data/incidents"), o.directory());
    assertEquals(2, o.keep(), "the agent argument wins");
  }

  @Test
  void onStartsTheWatchAndABadValueLeavesItOffWithoutThrowing(@TempDir Path temp) {
    Properties bad = new Properties();
    bad.setProperty("nativemem.watch", "maybe");
    WatchStart.startIfOn(bad);
    assertNull(MemoryWatch.current());
    Properties on = new Properties();
    on.setProperty("nativemem.watch", "on");
    on.setProperty("nativemem.watch.dir", temp.resolve("incidents").toString());
    WatchStart.startIfOn(on);
    MemoryWatch watch = MemoryWatch.current();
    try {
      assertNotNull(watch);
      assertEquals(temp.resolve("incidents"), watch.directory());
    } finally {
      watch.close();
    }
    assertNull(MemoryWatch.current());
  }

  @Test
  void anUnknownWatchKeyNamesTheValidOnes() {
    IllegalArgumentException e =
        assertThrows(
            IllegalArgumentException.class,
            () -> TrackingOptions.parse("watch.dri=/x", new Properties()));
    assertTrue(e.getMessage().contains("'watch.dri'"), e.getMessage());
    assertTrue(e.getMessage().contains("watch.dir"), e.getMessage());
  }
}
