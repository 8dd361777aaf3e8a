package dev.nativemem.watch;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.List;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The deletion race of a watch directory reached by path (issue 26, finding 2), made deterministic:
 * a component of the watch directory's path is re-pointed between the start and the next capture's
 * retention (the real directory renamed away, a link to a victim put in its place). The watch works
 * on the directory it opened, so the victim keeps all of its files and gets no bundle, and the new
 * bundle lands in the original directory.
 */
class SwappedPathTest {
  @TempDir Path temp;
  private MemoryWatch watch;

  @AfterEach
  void stop() throws InterruptedException {
    if (watch != null) {
      watch.close();
      // A capture under way writes into the temporary directory JUnit removes next.
      assertTrue(watch.awaitCapturesDone(Duration.ofSeconds(60)), "the captures under way end");
    }
  }

  @Test
  void aComponentRepointedAfterTheStartRedirectsNoWriteAndNoDeletion() throws IOException {
    Path volume = temp.resolve("volume");
    Path incidents = volume.resolve("incidents");
    watch =
        MemoryWatch.start(
            WatchOptions.defaults()
                .withDirectory(incidents)
                .withProfile(false)
                .withRetention(1, Long.MAX_VALUE));
    Path first = watch.capture("before the swap");

    // The victim: a private directory elsewhere whose layout matches the watch directory's, with
    // an older bundle-named directory of this user holding 4 files.
    Path victim = Files.createDirectory(temp.resolve("victim"));
    Path victimIncidents =
        Files.createDirectory(
            victim.resolve("incidents"),
            PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
    Path precious =
        Files.createDirectory(
            victimIncidents.resolve("nativemem-incident-1-20200101T000000Z-limit"));
    for (String name : List.of("a", "b", "c", "manifest.json")) {
      Files.write(precious.resolve(name), new byte[] {42});
    }

    Path moved = temp.resolve("volume-moved");
    Files.move(volume, moved);
    Files.createSymbolicLink(volume, victim);

    Path second = watch.capture("after the swap");

    assertEquals(
        List.of("a", "b", "c", "manifest.json"), names(precious), "nothing of the victim deleted");
    assertEquals(
        List.of(precious.getFileName().toString()),
        names(victimIncidents),
        "no bundle written into the victim");
    List<String> original = names(moved.resolve("incidents"));
    assertTrue(
        original.contains(second.getFileName().toString()),
        "the new bundle is in the directory the watch opened: " + original);
    assertTrue(
        !original.contains(first.getFileName().toString()),
        "retention (keep 1) worked on the directory the watch opened: " + original);
  }

  private static List<String> names(Path dir) throws IOException {
    try (Stream<Path> s = Files.list(dir)) {
      return s.map(p -> p.getFileName().toString()).sorted().collect(Collectors.toList());
    }
  }
}
