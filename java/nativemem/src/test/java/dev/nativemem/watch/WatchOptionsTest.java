package dev.nativemem.watch;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.nativemem.base.Setting;
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
                "nativemem.watch.thresholdsPercent", "95+70",
                "nativemem.watch.intervalSeconds", "0.25",
                "nativemem.watch.keep", "3",
                "nativemem.watch.maxMiB", "64"));
    assertEquals(Paths.get("/var/tmp/x"), o.directory());
    assertEquals(List.of(70.0, 95.0), o.thresholdsPercent());
    assertEquals(Duration.ofMillis(250), o.interval());
    assertEquals(3, o.keep());
    assertEquals(64L << 20, o.maxBytes());
  }

  @Test
  void badValuesAreRefusedNamingTheProperty() {
    for (String[] bad :
        new String[][] {
          {"nativemem.watch.thresholdsPercent", "85+120"},
          {"nativemem.watch.thresholdsPercent", "0"},
          {"nativemem.watch.thresholdsPercent", "high"},
          {"nativemem.watch.intervalSeconds", "0"},
          {"nativemem.watch.keep", "-1"},
          {"nativemem.watch.profile", "yes"},
        }) {
      IllegalArgumentException e =
          assertThrows(IllegalArgumentException.class, () -> WatchOptions.from(props(bad)));
      assertTrue(e.getMessage().startsWith("-D" + bad[0] + "=" + bad[1]), e.getMessage());
    }
    assertThrows(
        IllegalArgumentException.class, () -> WatchOptions.defaults().withThresholdsPercent(100));
    assertThrows(
        IllegalArgumentException.class,
        () -> WatchOptions.defaults().withHistory(Duration.ofMillis(10)));
    assertThrows(IllegalArgumentException.class, () -> WatchOptions.defaults().withRetention(0, 1));
  }

  /** The Java API and the property take thresholds in one unit: percent of the limit. */
  @Test
  void thresholdsArePercentInTheApiAsInTheProperty() {
    WatchOptions fromProperty =
        WatchOptions.from(props("nativemem.watch.thresholdsPercent", "85+95"));
    WatchOptions fromApi = WatchOptions.defaults().withThresholdsPercent(95, 85);
    assertEquals(fromProperty.thresholdsPercent(), fromApi.thresholdsPercent());
    assertEquals(List.of(85.0, 95.0), fromApi.thresholdsPercent());
  }

  /**
   * Every watch property whose value has a unit names it: durations in seconds ({@code …Seconds}),
   * thresholds in percent ({@code …Percent}), sizes in MiB ({@code …MiB}); no other unit of time.
   */
  @Test
  void everyWatchPropertyNamesItsUnit() {
    for (Setting setting : Setting.values()) {
      String name = setting.property();
      String text = setting.description().toLowerCase(java.util.Locale.ROOT);
      if (!name.startsWith("nativemem.watch.")) {
        continue;
      }
      assertFalse(
          text.contains("milliseconds") || text.contains("minutes"),
          name + " counts in another unit than seconds: " + text);
      if (text.startsWith("seconds") || text.contains("within this many seconds")) {
        assertTrue(name.endsWith("Seconds"), name + " holds seconds");
      }
      if (text.contains("in percent")) {
        assertTrue(name.endsWith("Percent"), name + " holds percent");
      }
      if (text.startsWith("mib")) {
        assertTrue(name.endsWith("MiB"), name + " holds MiB");
      }
    }
    WatchOptions defaults = WatchOptions.defaults();
    assertEquals(Duration.ofSeconds(1), defaults.interval());
    assertEquals(Duration.ofMinutes(15), defaults.growthHorizon());
    assertEquals(Duration.ofMinutes(1), defaults.minInterval());
  }
}
