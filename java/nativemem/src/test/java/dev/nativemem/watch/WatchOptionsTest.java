package dev.nativemem.watch;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Paths;
import java.time.Duration;
import java.util.List;
import java.util.Properties;
import org.junit.jupiter.api.Test;

class WatchOptionsTest {
  private static Properties props(String... pairs) {
    Properties p = new Properties();
    for (int i = 0; i < pairs.length; i += 2) {
      p.setProperty(pairs[i], pairs[i + 1]);
    }
    return p;
  }

  @Test
  void propertiesSetTheOptions() {
    WatchOptions o =
        WatchOptions.from(
            props(
                "nativemem.watch.dir", "/var/tmp/x",
                "nativemem.watch.thresholds", "95+70",
                "nativemem.watch.interval", "250",
                "nativemem.watch.keep", "3",
                "nativemem.watch.maxMiB", "64"));
    assertEquals(Paths.get("/var/tmp/x"), o.directory());
    assertEquals(List.of(0.70, 0.95), o.thresholds());
    assertEquals(Duration.ofMillis(250), o.interval());
    assertEquals(3, o.keep());
    assertEquals(64L << 20, o.maxBytes());
  }

  @Test
  void badValuesAreRefusedNamingTheProperty() {
    for (String[] bad :
        new String[][] {
          {"nativemem.watch.thresholds", "85+120"},
          {"nativemem.watch.thresholds", "0"},
          {"nativemem.watch.thresholds", "high"},
          {"nativemem.watch.interval", "0"},
          {"nativemem.watch.keep", "-1"},
          {"nativemem.watch.profile", "yes"},
        }) {
      IllegalArgumentException e =
          assertThrows(IllegalArgumentException.class, () -> WatchOptions.from(props(bad)));
      assertTrue(e.getMessage().startsWith("-D" + bad[0] + "=" + bad[1]), e.getMessage());
    }
    assertThrows(IllegalArgumentException.class, () -> WatchOptions.defaults().withThresholds(1.0));
    assertThrows(
        IllegalArgumentException.class,
        () -> WatchOptions.defaults().withHistory(Duration.ofMillis(10)));
    assertThrows(IllegalArgumentException.class, () -> WatchOptions.defaults().withRetention(0, 1));
  }
}
