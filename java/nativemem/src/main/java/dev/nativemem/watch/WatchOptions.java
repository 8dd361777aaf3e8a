package dev.nativemem.watch;

import dev.nativemem.base.Setting;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Objects;
import java.util.Properties;

/**
 * How the memory watch samples, when it captures a bundle and how many it keeps. Immutable: each
 * {@code with…} method returns a changed copy and checks its value. The defaults are the {@code
 * nativemem.watch.*} settings' (docs/configuration.md). Units: durations are {@link Duration}s here
 * and seconds in the properties ({@code …Seconds}); thresholds are percent of the limit in both
 * ({@code …Percent}); sizes are bytes here and MiB in the property ({@code maxMiB}).
 *
 * <pre>{@code
 * MemoryWatch watch = MemoryWatch.start(
 *     WatchOptions.fromSystemProperties().withDirectory(Paths.get("/var/log/app/incidents")));
 * }</pre>
 */
public final class WatchOptions {
  private Path directory;
  private Duration interval;
  private Duration history;
  private List<Double> thresholdsPercent;
  private Duration growthWindow;
  private Duration growthHorizon;
  private long leakedJump;
  private Duration minInterval;
  private int keep;
  private long maxBytes;
  private boolean profile;

  private WatchOptions() {}

  /** The defaults, whatever system properties say. */
  public static WatchOptions defaults() {
    return from(new Properties());
  }

  /** The {@code nativemem.watch.*} system properties over the defaults. */
  public static WatchOptions fromSystemProperties() {
    return from(System.getProperties());
  }

  /**
   * The {@code nativemem.watch.*} entries of {@code properties} over the defaults.
   *
   * @throws IllegalArgumentException naming the property, its bad value and what it takes
   */
  public static WatchOptions from(Properties properties) {
    WatchOptions o = new WatchOptions();
    String dir = Setting.WATCH_DIR.valueIn(properties);
    o.directory = dir != null && !dir.trim().isEmpty() ? Paths.get(dir.trim()) : defaultDirectory();
    o.interval = seconds(properties, Setting.WATCH_INTERVAL, 0.01, 3600);
    o.history = Duration.ofSeconds(number(properties, Setting.WATCH_HISTORY, 10, 7 * 86_400));
    o.thresholdsPercent = thresholds(properties);
    o.growthWindow = Duration.ofSeconds(number(properties, Setting.WATCH_GROWTH_WINDOW, 0, 86_400));
    o.growthHorizon =
        Duration.ofSeconds(number(properties, Setting.WATCH_GROWTH_HORIZON, 60, 7 * 86_400));
    o.leakedJump = number(properties, Setting.WATCH_LEAKED, 0, Long.MAX_VALUE);
    o.minInterval = Duration.ofSeconds(number(properties, Setting.WATCH_MIN_INTERVAL, 0, 86_400));
    o.keep = (int) number(properties, Setting.WATCH_KEEP, 1, 10_000);
    o.maxBytes = number(properties, Setting.WATCH_MAX_MIB, 1, 1L << 30) << 20;
    o.profile = bool(properties, Setting.WATCH_PROFILE);
    o.checkHistory();
    return o;
  }

  /** {@code ${java.io.tmpdir}/nativemem-incidents-<user>}. */
  static Path defaultDirectory() {
    return Paths.get(
        System.getProperty("java.io.tmpdir"),
        "nativemem-incidents-" + System.getProperty("user.name", "unknown"));
  }

  private static long number(Properties properties, Setting setting, long min, long max) {
    String text = setting.valueIn(properties).trim();
    long value;
    try {
      value = Long.parseLong(text);
    } catch (NumberFormatException e) {
      throw bad(setting, text, "a whole number from " + min + " to " + max);
    }
    if (value < min || value > max) {
      throw bad(setting, text, "a whole number from " + min + " to " + max);
    }
    return value;
  }

  /** Seconds from {@code min} to {@code max}, a decimal allowed, to the millisecond. */
  private static Duration seconds(Properties properties, Setting setting, double min, double max) {
    String text = setting.valueIn(properties).trim();
    String takes = "seconds from " + min + " to " + (long) max + ", such as 1 or 0.25";
    double value;
    try {
      value = Double.parseDouble(text);
    } catch (NumberFormatException e) {
      throw bad(setting, text, takes);
    }
    if (!(value >= min && value <= max)) {
      throw bad(setting, text, takes);
    }
    return Duration.ofMillis(Math.round(value * 1000));
  }

  private static boolean bool(Properties properties, Setting setting) {
    String text = setting.valueIn(properties).trim();
    if (!text.equals("true") && !text.equals("false")) {
      throw bad(setting, text, "true or false");
    }
    return Boolean.parseBoolean(text);
  }

  private static List<Double> thresholds(Properties properties) {
    String text = Setting.WATCH_THRESHOLDS.valueIn(properties).trim();
    List<Double> percents = new ArrayList<>();
    for (String word : text.split("\\+")) {
      if (word.trim().isEmpty()) {
        continue;
      }
      try {
        percents.add(Double.parseDouble(word.trim()));
      } catch (NumberFormatException e) {
        throw bad(Setting.WATCH_THRESHOLDS, text, "percentages joined by +, such as 85+95");
      }
    }
    try {
      return checkedThresholds(percents);
    } catch (IllegalArgumentException e) {
      throw bad(Setting.WATCH_THRESHOLDS, text, "percentages above 0 and below 100, such as 85+95");
    }
  }

  private static IllegalArgumentException bad(Setting setting, String value, String takes) {
    return new IllegalArgumentException(
        "-D" + setting.property() + "=" + value + ": takes " + takes);
  }

  private WatchOptions copy() {
    WatchOptions o = new WatchOptions();
    o.directory = directory;
    o.interval = interval;
    o.history = history;
    o.thresholdsPercent = thresholdsPercent;
    o.growthWindow = growthWindow;
    o.growthHorizon = growthHorizon;
    o.leakedJump = leakedJump;
    o.minInterval = minInterval;
    o.keep = keep;
    o.maxBytes = maxBytes;
    o.profile = profile;
    return o;
  }

  private void checkHistory() {
    if (history.compareTo(interval) < 0) {
      throw new IllegalArgumentException(
          "history " + history + " is shorter than the sample interval " + interval);
    }
  }

  private static Duration positive(Duration d, String what) {
    Objects.requireNonNull(d, what);
    if (d.isNegative() || d.isZero()) {
      throw new IllegalArgumentException(what + " must be positive, got " + d);
    }
    return d;
  }

  private static List<Double> checkedThresholds(List<Double> percents) {
    for (double p : percents) {
      if (!(p > 0 && p < 100)) {
        throw new IllegalArgumentException(
            "thresholds are percent of the limit above 0 and below 100 (such as 85), got " + p);
      }
    }
    List<Double> sorted = new ArrayList<>(percents);
    Collections.sort(sorted);
    return Collections.unmodifiableList(sorted);
  }

  /** Where bundles go; the directory must be this user's and writable by no other user. */
  public WatchOptions withDirectory(Path directory) {
    WatchOptions o = copy();
    o.directory = Objects.requireNonNull(directory, "directory");
    return o;
  }

  /** Time between samples (default 1 s). */
  public WatchOptions withInterval(Duration interval) {
    WatchOptions o = copy();
    o.interval = positive(interval, "interval");
    o.checkHistory();
    return o;
  }

  /** How far back the ring of samples reaches (default 1 h). */
  public WatchOptions withHistory(Duration history) {
    WatchOptions o = copy();
    o.history = positive(history, "history");
    o.checkHistory();
    return o;
  }

  /**
   * Usage in percent of the limit (above 0, below 100, such as {@code 85, 95}) whose crossing
   * triggers a bundle; none: off. The same unit as {@code -Dnativemem.watch.thresholdsPercent}.
   */
  public WatchOptions withThresholdsPercent(double... percents) {
    List<Double> list = new ArrayList<>();
    for (double p : percents) {
      list.add(p);
    }
    WatchOptions o = copy();
    o.thresholdsPercent = checkedThresholds(list);
    return o;
  }

  /**
   * The growth trigger: a line fitted to the usage of the last {@code window} reaches the limit
   * within {@code horizon}. A zero window turns it off.
   */
  public WatchOptions withGrowth(Duration window, Duration horizon) {
    Objects.requireNonNull(window, "window");
    if (window.isNegative()) {
      throw new IllegalArgumentException("window must not be negative, got " + window);
    }
    WatchOptions o = copy();
    o.growthWindow = window;
    o.growthHorizon = positive(horizon, "horizon");
    return o;
  }

  /** Handles newly leaked within a minute that trigger a bundle; 0 turns the trigger off. */
  public WatchOptions withLeakedJump(long handles) {
    if (handles < 0) {
      throw new IllegalArgumentException("handles must not be negative, got " + handles);
    }
    WatchOptions o = copy();
    o.leakedJump = handles;
    return o;
  }

  /** At most {@code bundles} bundles and {@code bytes} bytes of them are kept. */
  public WatchOptions withRetention(int bundles, long bytes) {
    if (bundles < 1 || bytes < 1) {
      throw new IllegalArgumentException(
          "keep at least 1 bundle and 1 byte, got " + bundles + " and " + bytes);
    }
    WatchOptions o = copy();
    o.keep = bundles;
    o.maxBytes = bytes;
    return o;
  }

  /**
   * Whether starting the watch turns heap sampling on, so bundles carry a heap profile, where
   * either engine can run (default true).
   */
  public WatchOptions withProfile(boolean profile) {
    WatchOptions o = copy();
    o.profile = profile;
    return o;
  }

  public Path directory() {
    return directory;
  }

  public Duration interval() {
    return interval;
  }

  public Duration history() {
    return history;
  }

  /** Percent of the limit, ascending. */
  public List<Double> thresholdsPercent() {
    return thresholdsPercent;
  }

  public Duration growthWindow() {
    return growthWindow;
  }

  public Duration growthHorizon() {
    return growthHorizon;
  }

  public long leakedJump() {
    return leakedJump;
  }

  public Duration minInterval() {
    return minInterval;
  }

  public int keep() {
    return keep;
  }

  public long maxBytes() {
    return maxBytes;
  }

  public boolean profile() {
    return profile;
  }

  /** Samples the ring holds. */
  int capacity() {
    return (int) Math.max(2, Math.min(1 << 20, history.toMillis() / interval.toMillis()));
  }

  @Override
  public String toString() {
    return "dir="
        + directory
        + ", interval_seconds="
        + interval.toMillis() / 1000.0
        + ", history_seconds="
        + history.getSeconds()
        + ", thresholds_percent="
        + Arrays.toString(thresholdsPercent.toArray())
        + ", growth_window_seconds="
        + growthWindow.getSeconds()
        + ", growth_horizon_seconds="
        + growthHorizon.getSeconds()
        + ", leaked_jump="
        + leakedJump
        + ", min_interval_seconds="
        + minInterval.getSeconds()
        + ", keep="
        + keep
        + ", max_bytes="
        + maxBytes
        + ", profile="
        + profile;
  }
}
