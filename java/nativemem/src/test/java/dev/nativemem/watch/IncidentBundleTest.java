package dev.nativemem.watch;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.nativemem.base.NativeMemoryException;
import dev.nativemem.incident.layout.BundleLayout;
import dev.nativemem.internal.Json;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Consumer;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Bundles written by a real watch in this JVM: layout, modes, manifest, atomicity. */
class IncidentBundleTest {
  @TempDir Path temp;
  private MemoryWatch watch;
  private final Consumer<Path> page = IncidentBundle.incidentPage;
  private final OutputStream stderr = IncidentBundle.verdictLog;
  private final ByteArrayOutputStream log = new ByteArrayOutputStream();

  @BeforeEach
  void captureTheLog() {
    IncidentBundle.verdictLog = log;
  }

  @AfterEach
  void stop() throws InterruptedException {
    if (watch != null) {
      watch.close();
      // A capture under way writes into the temporary directory JUnit removes next.
      assertTrue(watch.awaitCapturesDone(Duration.ofSeconds(60)), "the captures under way end");
    }
    IncidentBundle.incidentPage = page;
    IncidentBundle.verdictLog = stderr;
  }

  private MemoryWatch start(Path dir) {
    watch = MemoryWatch.start(WatchOptions.defaults().withDirectory(dir).withProfile(false));
    return watch;
  }

  private static String mode(Path p) throws IOException {
    return PosixFilePermissions.toString(
        Files.getPosixFilePermissions(p, LinkOption.NOFOLLOW_LINKS));
  }

  @SuppressWarnings("unchecked")
  @Test
  void aBundleIsPrivateCompleteAndListsWhatItLacks() throws IOException {
    Path dir = temp.resolve("incidents");
    Path bundle = start(dir).capture("test asked");
    assertEquals(dir, bundle.getParent());
    assertTrue(
        BundleName.PATTERN.matcher(bundle.getFileName().toString()).matches(), bundle.toString());
    assertTrue(bundle.getFileName().toString().endsWith("-on-demand"));
    assertEquals("rwx------", mode(dir));
    assertEquals("rwx------", mode(bundle));

    Map<String, Object> manifest =
        Json.parseObject(Files.readString(bundle.resolve("manifest.json")));
    assertEquals("nativemem-incident/1", manifest.get("schema"));
    assertEquals(ProcessHandle.current().pid(), ((Number) manifest.get("pid")).longValue());
    assertEquals("on-demand", ((Map<String, Object>) manifest.get("trigger")).get("kind"));
    assertEquals("test asked", ((Map<String, Object>) manifest.get("trigger")).get("detail"));
    assertTrue(manifest.containsKey("previous_bundle"));
    Set<String> listed = new HashSet<>();
    for (Map<String, Object> f : (List<Map<String, Object>>) manifest.get("files")) {
      listed.add((String) f.get("name"));
    }
    Set<String> present;
    try (Stream<Path> files = Files.list(bundle)) {
      present = files.map(p -> p.getFileName().toString()).collect(Collectors.toSet());
    }
    assertEquals(present, listed, "the manifest lists exactly the files present");
    for (String name : present) {
      assertEquals("rw-------", mode(bundle.resolve(name)), name);
    }
    for (String name :
        List.of("timeline.json", "snapshot.json", "breakdown.txt", "advice.json", "advice.txt")) {
      assertTrue(present.contains(name), name + " in " + present);
    }
    assertTrue(
        present.contains(BundleLayout.JEMALLOC_STATS)
            || present.contains(BundleLayout.GLIBC_MALLOC_INFO));
    List<String> missing = new ArrayList<>();
    for (Map<String, Object> m : (List<Map<String, Object>>) manifest.get("missing")) {
      missing.add(m.get("what") + ": " + m.get("why"));
    }
    assertTrue(
        page == null
            ? missing.stream().anyMatch(m -> m.startsWith("incident page"))
            : present.contains("incident.html"),
        missing.toString());
    assertTrue(
        present.contains("handles.json") || missing.stream().anyMatch(m -> m.startsWith("handle")),
        missing.toString());

    Map<String, Object> timeline =
        Json.parseObject(Files.readString(bundle.resolve("timeline.json")));
    List<Map<String, Object>> samples = (List<Map<String, Object>>) timeline.get("samples");
    assertFalse(samples.isEmpty());
    Set<String> keys = samples.get(0).keySet();
    for (String key :
        List.of(
            "t",
            "limit",
            "usage",
            "rss",
            "allocator_allocated",
            "allocator_resident",
            "heap_used",
            "heap_committed",
            "handles_open",
            "handles_leaked",
            "psi_some_avg10")) {
      assertTrue(keys.contains(key), key + " in " + keys);
    }
    for (Map<String, Object> s : samples) {
      assertEquals(keys, s.keySet(), "every sample has every key");
    }
    // The RSS sampled matches the kernel's own figure of that moment within what a test can hold.
    long rss = ((Number) samples.get(samples.size() - 1).get("rss")).longValue();
    long statm = statmRss();
    assertTrue(Math.abs(rss - statm) < 64 << 20, rss + " vs statm " + statm);
    assertEquals(
        "nativemem-snapshot/1",
        Json.parseObject(Files.readString(bundle.resolve("snapshot.json"))).get("schema"));
    assertEquals(List.of(bundle.getFileName().toString()), entries(dir), "no temporary left");
  }

  @Test
  void thePageIsWrittenLastUnderTheTemporaryNameAndNoHalfBundleIsVisible() throws IOException {
    Path dir = temp.resolve("incidents");
    start(dir);
    List<String> seenDuringPage = new ArrayList<>();
    IncidentBundle.incidentPage =
        tmp -> {
          try {
            assertTrue(tmp.startsWith("/proc/self/fd/"), "through its descriptor: " + tmp);
            assertTrue(Files.exists(tmp.resolve("manifest.json")));
            assertTrue(Files.exists(tmp.resolve("timeline.json")));
            seenDuringPage.addAll(entries(dir));
            Files.write(
                tmp.resolve("incident.html"), "<html></html>".getBytes(StandardCharsets.UTF_8));
          } catch (IOException e) {
            throw new RuntimeException(e);
          }
        };
    Path bundle = watch.capture("page");
    assertEquals(1, seenDuringPage.size(), seenDuringPage.toString());
    assertTrue(seenDuringPage.get(0).startsWith(".nativemem-incident-"), "only the temporary name");
    assertTrue(Files.readString(bundle.resolve("manifest.json")).contains("\"incident.html\""));
  }

  @Test
  void theVerdictReachesTheLogBeforeTheSlowPartsThenTheBundleIsAnnouncedComplete()
      throws IOException {
    Path dir = temp.resolve("incidents");
    start(dir);
    List<String> logAtPage = new ArrayList<>();
    List<String> filesAtPage = new ArrayList<>();
    IncidentBundle.incidentPage =
        tmp -> {
          logAtPage.add(log.toString(StandardCharsets.UTF_8));
          try {
            filesAtPage.addAll(entries(tmp));
          } catch (IOException e) {
            throw new RuntimeException(e);
          }
        };
    Path bundle = watch.capture("log");
    String atPage = logAtPage.get(0);
    assertTrue(atPage.contains("nativemem-incident: bundle " + bundle + " (being written"), atPage);
    assertTrue(atPage.contains("\"bundle\":\"" + bundle + "\"}\n"), atPage);
    assertFalse(atPage.contains("bundle complete: "), atPage);
    assertTrue(
        filesAtPage.contains("advice.json"), "the page comes after the rest: " + filesAtPage);
    String after = log.toString(StandardCharsets.UTF_8);
    assertTrue(after.startsWith(atPage), after);
    assertTrue(
        after
            .substring(atPage.length())
            .matches(
                "nativemem-incident: bundle complete: \\Q"
                    + bundle
                    + "\\E \\(captured in \\d+ ms\\)\n"),
        after);
    assertEquals(1, after.split("nativemem-incident-json: ", -1).length - 1, after);
  }

  /** The capture's duration is one figure: the manifest's, the page's and the log's. */
  @Test
  void theManifestThePageAndTheLogShowOneCaptureTime() throws IOException {
    Path dir = temp.resolve("incidents");
    start(dir);
    IncidentBundle.incidentPage =
        bundle -> {
          try {
            Thread.sleep(50); // a page that takes time, as a large one does
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
          }
          page.accept(bundle);
        };
    Path bundle = watch.capture("one figure");
    long manifest =
        ((Number)
                Json.parseObject(Files.readString(bundle.resolve("manifest.json")))
                    .get("capture_ms"))
            .longValue();
    java.util.regex.Matcher logged =
        java.util.regex.Pattern.compile("bundle complete: .* \\(captured in (\\d+) ms\\)")
            .matcher(log.toString(StandardCharsets.UTF_8));
    assertTrue(logged.find(), log.toString(StandardCharsets.UTF_8));
    assertEquals(manifest, Long.parseLong(logged.group(1)), "the log's figure is the manifest's");
    String html = Files.readString(bundle.resolve("incident.html"));
    String shown = manifest < 1000 ? manifest + " ms" : Math.round(manifest / 1000.0) + " s";
    assertTrue(html.contains("capture took " + shown), "the page shows " + shown);
  }

  @Test
  void aCaptureThatCannotFinishLeavesNothing() throws IOException {
    Path dir = temp.resolve("incidents");
    start(dir);
    IncidentBundle.incidentPage =
        tmp -> {
          try {
            String finalName = entries(dir).get(0).substring(1).replaceAll("\\.tmp-.*", "");
            Files.createDirectory(dir.resolve(finalName)); // the rename's target is taken
            Files.write(dir.resolve(finalName).resolve("theirs"), new byte[] {1});
          } catch (IOException e) {
            throw new RuntimeException(e);
          }
        };
    NativeMemoryException e = assertThrows(NativeMemoryException.class, () -> watch.capture("x"));
    assertTrue(e.getMessage().contains("exists already"), e.getMessage());
    String logged = log.toString(StandardCharsets.UTF_8);
    assertTrue(logged.contains("\nnativemem-incident: bundle not written: "), logged);
    assertFalse(logged.contains("bundle complete: "), logged);
    List<String> left = entries(dir);
    assertEquals(1, left.size(), left.toString());
    assertFalse(left.get(0).startsWith("."), "the temporary bundle is gone: " + left);
    assertTrue(Files.exists(dir.resolve(left.get(0)).resolve("theirs")), "theirs untouched");
  }

  /** A directory others can write (an emptyDir's 0777) holds a private child; nothing reopened. */
  @Test
  void aSharedDirectoryGetsAPrivateChildOfOurs() throws IOException {
    Path dir = Files.createDirectory(temp.resolve("shared"));
    Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwxrwxrwx"));
    Path bundle = start(dir).capture("shared");
    Path mine = dir.resolve("nativemem-" + dev.nativemem.internal.FileOwnership.processUid());
    assertEquals(mine, bundle.getParent());
    assertEquals(mine, watch.directory());
    assertEquals("rwx------", mode(mine));
    assertTrue(Files.isRegularFile(bundle.resolve("manifest.json")));
    watch.close();
    // A planted look-alike that is not private is refused, not used.
    Path other = Files.createDirectory(temp.resolve("other"));
    Files.setPosixFilePermissions(other, PosixFilePermissions.fromString("rwxrwxrwx"));
    Path planted =
        Files.createDirectory(
            other.resolve("nativemem-" + dev.nativemem.internal.FileOwnership.processUid()));
    Files.setPosixFilePermissions(planted, PosixFilePermissions.fromString("rwxrwxrwx"));
    NativeMemoryException e = assertThrows(NativeMemoryException.class, () -> start(other));
    assertTrue(e.getMessage().contains("not this user's private directory"), e.getMessage());
    watch = null;
  }

  @Test
  void theDiffBaseIsThisProcesssPreviousBundle() throws IOException {
    Path dir = temp.resolve("incidents");
    start(dir);
    Path first = watch.capture("one");
    Path second = watch.capture("two");
    String manifest = Files.readString(second.resolve("manifest.json"));
    assertTrue(manifest.contains("\"previous_bundle\":\"" + first.getFileName() + "\""), manifest);
  }

  private static List<String> entries(Path dir) throws IOException {
    try (Stream<Path> s = Files.list(dir)) {
      return s.map(p -> p.getFileName().toString()).sorted().collect(Collectors.toList());
    }
  }

  private static long statmRss() throws IOException {
    String[] words = Files.readString(Path.of("/proc/self/statm")).trim().split(" ");
    return Long.parseLong(words[1]) * 4096;
  }
}
