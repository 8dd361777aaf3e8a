package dev.nativemem.watch;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.nativemem.internal.DirectoryHandle;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.time.Instant;
import java.util.List;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Only our own bundles are counted and removed, oldest first; nothing planted is touched. */
class RetentionTest {
  @TempDir Path dir;

  private Path bundle(String name, int bytes) throws IOException {
    Path b = Files.createDirectory(dir.resolve(name));
    Files.write(b.resolve("timeline.json"), new byte[bytes]);
    return b;
  }

  @Test
  void removesOurOldestBundlesAndNothingElse() throws IOException {
    Path b1 = bundle("nativemem-incident-11-20261130T100000Z-limit", 10);
    Path b2 = bundle("nativemem-incident-22-20261130T110000Z-growth", 10);
    Path b3 = bundle("nativemem-incident-11-20261130T120000Z-on-demand", 10);
    Path b4 = bundle("nativemem-incident-33-20261130T130000Z-leaked-handles", 10);
    // Planted: a file and a link named like bundles, a look-alike with another kind, others.
    Path plantedFile =
        Files.write(dir.resolve("nativemem-incident-1-20200101T000000Z-limit"), new byte[1]);
    Path outside = Files.createTempDirectory("retention-outside");
    Files.write(outside.resolve("precious"), new byte[] {42});
    Path plantedLink =
        Files.createSymbolicLink(
            dir.resolve("nativemem-incident-2-20200101T000000Z-limit"), outside);
    Path lookAlike =
        Files.createDirectory(dir.resolve("nativemem-incident-3-20200101T000000Z-other"));
    Path other = Files.createDirectory(dir.resolve("keep-me"));

    try (DirectoryHandle handle = DirectoryHandle.open(dir)) {
      List<String> removed = Retention.prune(handle, 2, Long.MAX_VALUE, name(b3));
      assertEquals(
          List.of(name(b1), name(b2)), removed, "the two oldest of ours, by the stamp in the name");
      assertEquals(List.of(name(b3), name(b4)), Retention.bundles(handle));
    }
    for (Path kept : List.of(plantedFile, plantedLink, lookAlike, other)) {
      assertTrue(Files.exists(kept, LinkOption.NOFOLLOW_LINKS), kept + " untouched");
    }
    assertTrue(Files.exists(outside.resolve("precious")), "nothing followed through the link");
  }

  @Test
  void theByteBoundRemovesOldestButNeverTheNewest() throws IOException {
    Path b1 = bundle("nativemem-incident-11-20261130T100000Z-limit", 600);
    Path b2 = bundle("nativemem-incident-11-20261130T110000Z-limit", 600);
    Path b3 = bundle("nativemem-incident-11-20261130T120000Z-limit", 2000);
    try (DirectoryHandle handle = DirectoryHandle.open(dir)) {
      List<String> removed = Retention.prune(handle, 10, 1000, name(b3));
      assertEquals(List.of(name(b1), name(b2)), removed, "b3 alone exceeds the bound but stays");
      assertEquals(2000, Retention.size(handle, name(b3)));
    }
  }

  @Test
  void temporariesOfDeadProcessesGoThoseOfLiveOnesStay() throws IOException {
    long dead = deadPid();
    Path stale =
        Files.createDirectory(
            dir.resolve(".nativemem-incident-" + dead + "-20261130T100000Z-limit.tmp-1a2b"));
    Path live =
        Files.createDirectory(
            dir.resolve(
                ".nativemem-incident-"
                    + ProcessHandle.current().pid()
                    + "-20261130T100000Z-limit.tmp-3c4d"));
    Path recent =
        Files.createDirectory(
            dir.resolve(".nativemem-incident-" + dead + "-20261130T100001Z-limit.tmp-5e6f"));
    FileTime old = FileTime.from(Instant.now().minus(Retention.STALE_TEMP).minusSeconds(60));
    Files.setLastModifiedTime(stale, old);
    Files.setLastModifiedTime(live, old);
    try (DirectoryHandle handle = DirectoryHandle.open(dir)) {
      Retention.prune(handle, 10, Long.MAX_VALUE, null);
    }
    try (Stream<Path> s = Files.list(dir)) {
      assertEquals(
          List.of(live, recent).stream().sorted().collect(Collectors.toList()),
          s.sorted().collect(Collectors.toList()));
    }
  }

  private static String name(Path bundle) {
    return bundle.getFileName().toString();
  }

  /** A pid no process has now: a child that has exited and been reaped. */
  private static long deadPid() throws IOException {
    try {
      Process p = new ProcessBuilder("true").start();
      p.waitFor();
      return p.pid();
    } catch (InterruptedException e) {
      throw new IOException(e);
    }
  }
}
