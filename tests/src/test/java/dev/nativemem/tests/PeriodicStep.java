package dev.nativemem.tests;

import dev.nativemem.profile.HeapProfiler;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

/** A step a stress child repeats on a thread of its own while it runs. */
interface PeriodicStep {
  void run() throws Exception;

  /**
   * A thread (not started) running {@code step} every {@code periodMillis} while {@code running}; a
   * step that throws is counted in {@code failures} and printed as {@code FAILURE <exception>}.
   */
  static Thread every(
      AtomicBoolean running, long periodMillis, AtomicLong failures, PeriodicStep step) {
    return new Thread(
        () -> {
          while (running.get()) {
            try {
              step.run();
            } catch (Exception e) {
              failures.incrementAndGet();
              System.out.println("FAILURE " + e);
            }
            try {
              Thread.sleep(periodMillis);
            } catch (InterruptedException e) {
              return;
            }
          }
        },
        "loop-" + periodMillis);
  }

  /** A thread (not started) stopping and starting {@code profiler} in turn every 100 ms. */
  static Thread startingAndStopping(
      AtomicBoolean running, HeapProfiler profiler, AtomicLong toggles, AtomicLong failures) {
    return every(
        running,
        100,
        failures,
        () -> {
          if (toggles.incrementAndGet() % 2 == 0) {
            profiler.start();
          } else {
            profiler.stop();
          }
        });
  }
}
