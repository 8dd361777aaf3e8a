package dev.nativemem.watch;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.nativemem.internal.AppLog;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A crossing the watch declines (inside {@code nativemem.watch.minIntervalSeconds}, no higher limit
 * threshold than the incident's last) is said in the log at INFO, with why; an escalation inside
 * the interval is captured and says nothing of the kind. The truth is the bundles on disk.
 */
class DeclinedTriggerTest {
  private static final String DECLINED = ": no bundle, the incident's last was ";

  @TempDir Path temp;
  private final Logger logger = Logger.getLogger("dev.nativemem.watch");
  private final List<LogRecord> records = new ArrayList<>();
  private final Handler handler =
      new Handler() {
        @Override
        public void publish(LogRecord record) {
          synchronized (records) {
            records.add(record);
          }
        }

        @Override
        public void flush() {}

        @Override
        public void close() {}
      };
  private MemoryWatch watch;

  @BeforeEach
  void listen() {
    logger.addHandler(handler);
  }

  @AfterEach
  void stop() throws InterruptedException {
    if (watch != null) {
      watch.close();
      // A capture under way writes into the temporary directory JUnit removes next.
      assertTrue(watch.awaitCapturesDone(Duration.ofSeconds(60)), "the captures under way end");
    }
    logger.removeHandler(handler);
  }

  @Test
  void aCrossingInsideTheMinimumIntervalIsDeclinedWithAnInfoLineThatSaysWhy() throws Exception {
    assertFalse(AppLog.throughSlf4j(), "this module's tests log through java.util.logging");
    Properties properties = new Properties();
    properties.setProperty("nativemem.watch.minIntervalSeconds", "600");
    WatchOptions options =
        WatchOptions.from(properties)
            .withDirectory(temp)
            .withProfile(false)
            .withGrowth(Duration.ZERO, Duration.ofMinutes(1))
            .withLeakedJump(0);
    watch = MemoryWatch.start(options);

    Trigger at85 = new Trigger(Trigger.Kind.LIMIT, "usage 86.0% of the 512 MiB limit", 85.0);
    watch.offer(at85);
    awaitBundles(1);
    assertEquals(List.of(), declined(), "the incident's first crossing is captured");

    // The same threshold again, at once: declined, and the log says so and why.
    Trigger again = new Trigger(Trigger.Kind.LIMIT, "usage 85.5% of the 512 MiB limit", 85.0);
    watch.offer(again);
    Trigger growth =
        new Trigger(Trigger.Kind.GROWTH, "usage reaches the 512 MiB limit in 40 s", null);
    watch.offer(growth);
    List<LogRecord> declined = declined();
    assertEquals(2, declined.size(), messages(declined));
    for (LogRecord record : declined) {
      assertEquals(Level.INFO, record.getLevel(), record.getMessage());
    }
    String why =
        " s ago (under nativemem.watch.minIntervalSeconds=600) and this crosses no higher limit"
            + " threshold than it did, or did so ";
    assertTrue(
        declined
            .get(0)
            .getMessage()
            .matches(
                quoted("nativemem memory watch: " + again + DECLINED)
                    + "[0-9]+"
                    + quoted(why)
                    + "[0-9]+ ms ago"),
        declined.get(0).getMessage());
    assertTrue(
        declined.get(1).getMessage().startsWith("nativemem memory watch: " + growth + DECLINED),
        declined.get(1).getMessage());
    Thread.sleep(500);
    assertEquals(1, bundles().size(), "nothing captured for a declined trigger: " + bundles());

    // A higher threshold inside the interval is an escalation: captured, nothing declined.
    watch.offer(new Trigger(Trigger.Kind.LIMIT, "usage 95.1% of the 512 MiB limit", 95.0));
    awaitBundles(2);
    assertEquals(2, declined().size(), messages(declined()));
  }

  private static String quoted(String text) {
    return java.util.regex.Pattern.quote(text);
  }

  private List<LogRecord> declined() {
    synchronized (records) {
      return records.stream()
          .filter(r -> r.getMessage() != null && r.getMessage().contains(DECLINED))
          .collect(Collectors.toList());
    }
  }

  private static String messages(List<LogRecord> records) {
    return records.stream().map(LogRecord::getMessage).collect(Collectors.joining("\n"));
  }

  private void awaitBundles(int count) throws Exception {
    long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
    while (bundles().size() < count && System.nanoTime() < deadline) {
      Thread.sleep(50);
    }
    assertEquals(count, bundles().size(), "bundles in " + watch.directory());
  }

  private List<Path> bundles() throws IOException {
    try (Stream<Path> s = Files.list(watch.directory())) {
      return s.filter(p -> BundleName.PATTERN.matcher(p.getFileName().toString()).matches())
          .collect(Collectors.toList());
    }
  }
}
