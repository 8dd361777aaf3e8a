package dev.nativemem.watch;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.nativemem.base.NativeMemoryException;
import dev.nativemem.internal.FileOwnership;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.function.Consumer;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The watch on a small volume (a 2 MiB tmpfs, mode 0777 as an emptyDir): a full bundle while there
 * is room, a trimmed one (no page, no raw allocator statistics) when free space is short, a skipped
 * capture that says so when there is almost none, and a volume that fills up in the middle of a
 * capture leaves no temporary directory and no bundle, and the watch goes on.
 */
class FullVolumeTest {
  @TempDir Path temp;
  private MemoryWatch watch;
  private final Consumer<Path> page = IncidentBundle.incidentPage;

  @AfterEach
  void stop() throws InterruptedException {
    if (watch != null) {
      watch.close();
      // A capture under way writes into the temporary directory JUnit removes next.
      assertTrue(watch.awaitCapturesDone(Duration.ofSeconds(60)), "the captures under way end");
    }
    IncidentBundle.incidentPage = page;
  }

  @Test
  void aSmallVolumeTrimsSkipsAndSurvivesAFullDisk() throws Exception {
    assumeTrue(
        FileOwnership.processUid() == 0, "mounting a tmpfs needs root (CI runs the tests as root)");
    Path mount = Files.createDirectory(temp.resolve("tmpfs"));
    run("mount", "-t", "tmpfs", "-o", "size=2m,mode=0777", "tmpfs", mount.toString());
    try {
      watch = MemoryWatch.start(WatchOptions.defaults().withDirectory(mount).withProfile(false));
      Path dir = watch.directory();
      assertEquals(mount.resolve("nativemem-0"), dir, "a private child in the shared volume");

      Path full = watch.capture("room");
      assertTrue(Files.isRegularFile(full.resolve("incident.html")), "a full bundle");
      assertTrue(Files.isRegularFile(full.resolve("manifest.json")));

      Path filler = mount.resolve("filler");
      fillTo(filler, mount, 900L << 10);
      Path trimmed = watch.capture("short");
      assertFalse(Files.exists(trimmed.resolve("incident.html")), "the page is left out");
      String manifest = Files.readString(trimmed.resolve("manifest.json"));
      assertTrue(manifest.contains("trimmed: "), manifest);
      assertTrue(Files.isRegularFile(trimmed.resolve("timeline.json")), "the small JSON stays");

      Path more = mount.resolve("filler-2");
      fillTo(more, mount, 300L << 10);
      NativeMemoryException skipped =
          assertThrows(NativeMemoryException.class, () -> watch.capture("none"));
      assertTrue(skipped.getMessage().contains("capture skipped: "), skipped.getMessage());
      assertEquals(
          List.of(trimmed), bundles(dir), "the oldest removed to make room, nothing written");

      Files.delete(more);
      Files.delete(filler);
      // Enough room by the estimate, then the volume fills up while the page is written.
      IncidentBundle.incidentPage =
          tmp -> {
            try {
              fillTo(filler, mount, 0);
            } catch (IOException e) {
              throw new RuntimeException(e);
            }
            page.accept(tmp);
          };
      NativeMemoryException full2 =
          assertThrows(NativeMemoryException.class, () -> watch.capture("fills up"));
      assertTrue(full2.getMessage().contains("filled up during the capture"), full2.getMessage());
      assertEquals(List.of(trimmed), entries(dir), "no new bundle, no temporary directory");
      assertTrue(watch.isRunning());

      IncidentBundle.incidentPage = page;
      Files.delete(filler);
      Path after = watch.capture("room again");
      assertTrue(Files.isRegularFile(after.resolve("incident.html")), "the watch goes on");
    } finally {
      if (watch != null) {
        watch.close();
        watch = null;
      }
      Thread.sleep(200); // the capture thread closes the directory's descriptor
      run("umount", "-l", mount.toString());
    }
  }

  /** Writes {@code file} until the volume has about {@code freeBytes} left (0: until ENOSPC). */
  private static void fillTo(Path file, Path mount, long freeBytes) throws IOException {
    long usable = Files.getFileStore(mount).getUsableSpace();
    long size = Math.max(0, usable - freeBytes);
    byte[] chunk = new byte[64 << 10];
    try (OutputStream out = Files.newOutputStream(file)) {
      for (long written = 0; freeBytes == 0 || written < size; written += chunk.length) {
        out.write(
            chunk, 0, (int) Math.min(chunk.length, freeBytes == 0 ? chunk.length : size - written));
      }
    } catch (IOException e) {
      if (freeBytes != 0 || !String.valueOf(e.getMessage()).contains("No space left")) {
        throw e;
      }
    }
  }

  private static List<Path> bundles(Path dir) throws IOException {
    try (Stream<Path> s = Files.list(dir)) {
      return s.filter(p -> BundleName.PATTERN.matcher(p.getFileName().toString()).matches())
          .sorted()
          .collect(Collectors.toList());
    }
  }

  private static List<Path> entries(Path dir) throws IOException {
    try (Stream<Path> s = Files.list(dir)) {
      return s.sorted().collect(Collectors.toList());
    }
  }

  private static void run(String... command) throws IOException, InterruptedException {
    Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes());
    assertEquals(0, p.waitFor(), String.join(" ", command) + ": " + out);
  }
}
