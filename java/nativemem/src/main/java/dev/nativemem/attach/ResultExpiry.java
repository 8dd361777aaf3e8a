package dev.nativemem.attach;

import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

/**
 * In the target: removes an attach result nobody read (its CLI was killed) after {@link
 * AttachProtocol#RESULT_TTL_SECONDS}. One daemon thread at most, gone when idle; it removes the
 * property only while it still holds that very result.
 */
final class ResultExpiry {
  private static final ScheduledThreadPoolExecutor TIMER = timer();

  private ResultExpiry() {}

  private static ScheduledThreadPoolExecutor timer() {
    ScheduledThreadPoolExecutor timer =
        new ScheduledThreadPoolExecutor(
            1,
            task -> {
              Thread thread = new Thread(task, "nativemem attach result expiry");
              thread.setDaemon(true);
              return thread;
            });
    timer.setKeepAliveTime(AttachProtocol.RESULT_TTL_SECONDS * 2L, TimeUnit.SECONDS);
    timer.allowCoreThreadTimeOut(true);
    timer.setRemoveOnCancelPolicy(true);
    return timer;
  }

  /** Sets {@code property} to {@code value} until it is read and forgotten, or expires. */
  static void put(String property, String value) {
    System.setProperty(property, value);
    TIMER.schedule(
        () -> System.getProperties().remove(property, value),
        AttachProtocol.RESULT_TTL_SECONDS,
        TimeUnit.SECONDS);
  }
}
