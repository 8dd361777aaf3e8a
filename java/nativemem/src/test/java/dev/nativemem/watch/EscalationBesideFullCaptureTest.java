package dev.nativemem.watch;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * In a process reclaiming at its limit an incident's first, full bundle can take many seconds; an
 * escalation meanwhile is captured beside it, not after it, so the newest evidence stays close to a
 * kill that may come before the full bundle is done. The full capture is held here by its page
 * renderer until the escalation's bundle is on disk; the truth is the bundles in the directory.
 */
class EscalationBesideFullCaptureTest {
  @TempDir Path temp;
  private final Consumer<Path> renderer = IncidentBundle.incidentPage;
  private MemoryWatch watch;

  @AfterEach
  void stop() throws InterruptedException {
    if (watch != null) {
      watch.close();
      // A capture under way writes into the temporary directory JUnit removes next.
      assertTrue(watch.awaitCapturesDone(Duration.ofSeconds(60)), "the captures under way end");
    }
    IncidentBundle.incidentPage = renderer;
  }

  @Test
  void anEscalationIsWrittenWhileTheIncidentsFullBundleIsStillBeingCaptured() throws Exception {
    Properties properties = new Properties();
    properties.setProperty("nativemem.watch.minIntervalSeconds", "600");
    watch =
        MemoryWatch.start(
            WatchOptions.from(properties)
                .withDirectory(temp)
                .withProfile(false)
                .withGrowth(Duration.ZERO, Duration.ofMinutes(1))
                .withLeakedJump(0));
    CountDownLatch pageStarted = new CountDownLatch(1);
    CountDownLatch release = new CountDownLatch(1);
    IncidentBundle.incidentPage =
        bundle -> {
          pageStarted.countDown();
          try {
            release.await(60, TimeUnit.SECONDS);
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
          }
          renderer.accept(bundle);
        };
    Path escalated;
    try {
      watch.offer(new Trigger(Trigger.Kind.LIMIT, "usage 86.0% of the 512 MiB limit", 85.0));
      assertTrue(pageStarted.await(60, TimeUnit.SECONDS), "the full capture reached its page");
      assertEquals(List.of(), bundles(), "the full bundle is not complete while its page is held");

      watch.offer(new Trigger(Trigger.Kind.LIMIT, "usage 95.1% of the 512 MiB limit", 95.0));
      List<Path> escalation = awaitBundles(1);
      escalated = escalation.get(0);
      // Published once its verdict parts are in place; its manifest is replaced, whole, once the
      // advice is written: a reader finds one manifest or the other, never none.
      String manifest = Files.readString(escalation.get(0).resolve("manifest.json"));
      assertTrue(
          manifest.contains("usage 95.1% of the 512 MiB limit"),
          "the bundle written meanwhile is the escalation's: " + manifest);
      assertTrue(manifest.contains("\"timeline.json\""), manifest);
      long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
      while (manifest.contains(IncidentBundle.STILL_CAPTURING) && System.nanoTime() < deadline) {
        Thread.sleep(20);
        manifest = Files.readString(escalation.get(0).resolve("manifest.json"));
      }
      assertTrue(
          manifest.contains("\"advice.txt\""), "the final manifest lists the advice: " + manifest);
      assertTrue(!manifest.contains(IncidentBundle.STILL_CAPTURING), manifest);
      assertTrue(
          manifest.contains("an escalation of the incident near the limit"),
          "the escalation says why it has no page: " + manifest);
      try (Stream<Path> files = Files.list(escalation.get(0))) {
        assertEquals(
            List.of(),
            files
                .map(f -> f.getFileName().toString())
                .filter(f -> f.startsWith("."))
                .collect(Collectors.toList()),
            "no temporary file left in the bundle");
      }
    } finally {
      release.countDown();
    }
    List<Path> both = awaitBundles(2);
    assertEquals(2, both.size(), "the full bundle completes after its escalation: " + both);
    // The newest evidence is the escalation's, though the full bundle was written after it.
    long until = System.nanoTime() + Duration.ofSeconds(2).toNanos();
    while (System.nanoTime() < until) {
      assertEquals(escalated, watch.lastBundle(), "the bundle captured last");
      Thread.sleep(20);
    }
  }

  private List<Path> awaitBundles(int count) throws Exception {
    long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
    while (bundles().size() < count && System.nanoTime() < deadline) {
      Thread.sleep(50);
    }
    List<Path> bundles = bundles();
    assertEquals(count, bundles.size(), "bundles in " + watch.directory());
    return bundles;
  }

  private List<Path> bundles() throws IOException {
    try (Stream<Path> s = Files.list(watch.directory())) {
      return s.filter(p -> BundleName.PATTERN.matcher(p.getFileName().toString()).matches())
          .sorted()
          .collect(Collectors.toList());
    }
  }
}
