package dev.nativemem.watch.starting;

import dev.nativemem.base.Setting;
import dev.nativemem.internal.AppLog;
import dev.nativemem.watch.MemoryWatch;
import dev.nativemem.watch.WatchOptions;
import java.util.Locale;
import java.util.Properties;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Starts the watch without code: {@code -Dnativemem.watch=on} (read when {@code NativeMemory} is
 * first used or the agent starts) or the agent's {@code watch=on,watch.dir=...} arguments.
 */
public final class WatchStart {
  /**
   * Whether the settings already started a watch (or tried). Once per JVM: the agent's start and
   * the facade's first use both come here, and the facade's first use can happen inside the agent's
   * own start (the watch asks the facade for the profiler), before {@link MemoryWatch#current()} is
   * set: two watches would then race for each bundle's name.
   */
  private static final AtomicBoolean CLAIMED = new AtomicBoolean();

  private WatchStart() {}

  /** Starts the watch if {@code nativemem.watch} says {@code on} and none runs; never throws. */
  public static void fromSettings() {
    startIfOn(System.getProperties());
  }

  /**
   * Starts the watch if {@code properties} (system properties with the agent's {@code watch*}
   * arguments over them) say {@code nativemem.watch=on} and none runs yet; a bad setting is
   * reported on the log and the application runs without the watch.
   */
  public static void startIfOn(Properties properties) {
    String value = Setting.WATCH.valueIn(properties).trim().toLowerCase(Locale.ROOT);
    if (value.equals("off") || value.equals("false") || MemoryWatch.current() != null) {
      return;
    }
    try {
      if (!value.equals("on") && !value.equals("true")) {
        throw new IllegalArgumentException(
            "-D" + Setting.WATCH.property() + "=" + value + ": takes on or off");
      }
      if (!CLAIMED.compareAndSet(false, true)) {
        return;
      }
      MemoryWatch.start(WatchOptions.from(properties));
    } catch (RuntimeException e) {
      AppLog.get("dev.nativemem.watch")
          .log(
              System.Logger.Level.WARNING, "nativemem memory watch not started: " + e.getMessage());
    }
  }
}
