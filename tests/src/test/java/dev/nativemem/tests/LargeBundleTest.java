package dev.nativemem.tests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code incident} reads any bundle in bounded memory (issue 26, finding 4): 56 MiB of JSON in
 * small objects, each file under the 8 MiB cap per file, renders under {@code -Xmx256m} with a
 * clear "bundle too large" reason where the page stops reading, and no OutOfMemoryError.
 */
class LargeBundleTest {
  @TempDir Path tmp;

  @Test
  void aBundleOfManySmallObjectsIsReadInBoundedMemory() throws Exception {
    Path bundle =
        Files.createDirectory(
            tmp.resolve("bundle"),
            PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
    Files.write(
        bundle.resolve("manifest.json"),
        "{\"schema\":\"nativemem-incident/1\",\"pid\":1}".getBytes(StandardCharsets.UTF_8));
    long total = 0;
    for (String name :
        List.of(
            "timeline.json",
            "snapshot.json",
            "handles.json",
            "advice.json",
            "profile-report.json",
            "profile-diff.json",
            "allocator-report.json")) {
      total += smallObjects(bundle.resolve(name), 8L << 20);
    }
    assertTrue(total > (56L << 20) - 1024, "56 MiB of JSON: " + total);

    long started = System.nanoTime();
    ForkedJvm.Result r =
        new ForkedJvm()
            .jvmArg("-Xmx256m", "-XX:+ExitOnOutOfMemoryError")
            .cli("incident", bundle.toString(), "-o", tmp.resolve("page.html").toString());
    long ms = (System.nanoTime() - started) / 1_000_000;
    assertEquals(0, r.exitCode, r.toString());
    assertFalse(r.toString().contains("OutOfMemoryError"), r.toString());
    String page = Files.readString(tmp.resolve("page.html"));
    assertTrue(
        page.contains("bundle too large: "), page.substring(0, Math.min(4000, page.length())));
    assertTrue(page.contains("directly"), "says which file to open instead");
    System.out.println(
        String.format(
            java.util.Locale.ROOT,
            "incident on a %.1f MiB bundle under -Xmx256m: %d ms",
            total / 1048576.0,
            ms));
  }

  /** A JSON object whose "samples" array holds {@code {}} objects, up to {@code bytes} long. */
  private static long smallObjects(Path file, long bytes) throws IOException {
    byte[] head = "{\"samples\":[{}".getBytes(StandardCharsets.US_ASCII);
    byte[] item = ",{}".getBytes(StandardCharsets.US_ASCII);
    byte[] tail = "]}".getBytes(StandardCharsets.US_ASCII);
    long written = 0;
    try (OutputStream out =
        new java.io.BufferedOutputStream(Files.newOutputStream(file), 1 << 16)) {
      out.write(head);
      written += head.length;
      while (written + item.length + tail.length <= bytes) {
        out.write(item);
        written += item.length;
      }
      out.write(tail);
      written += tail.length;
    }
    return written;
  }
}
