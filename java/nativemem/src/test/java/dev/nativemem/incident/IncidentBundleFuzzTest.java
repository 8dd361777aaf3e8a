package dev.nativemem.incident;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.code_intelligence.jazzer.junit.FuzzTest;
import dev.nativemem.internal.Json;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The incident page's readers of untrusted files, fuzzed: any bundle, whatever its files hold,
 * renders a whole page whose only markup is the page's own, and a JSON file that is not an object
 * is refused with a reason. Under plain {@code mvn test}, each {@code @FuzzTest} runs once per
 * committed input (resources {@code IncidentBundleFuzzTestInputs/<method>/}), in a JVM of its own
 * (surefire execution {@code fuzz-tests}: Jazzer attaches an agent); after a build, {@code
 * JAZZER_FUZZ=1 mvn -pl java/nativemem surefire:test@fuzz-tests} fuzzes them (SECURITY.md,
 * "Fuzzing").
 *
 * <p>A fuzz input is a bundle as text: sections {@code === <file name>} followed by that file's
 * bytes, so the committed inputs are readable bundles and mutations stay inside files.
 */
class IncidentBundleFuzzTest {
  /** The files the page reads. */
  private static final List<String> FILES =
      List.of(
          "manifest.json",
          "timeline.json",
          "snapshot.json",
          "profile-report.json",
          "profile-diff.json",
          "handles.json",
          "advice.json",
          "nmt.txt",
          "profile-flame.svg");

  private static final byte[] SECTION = "=== ".getBytes(StandardCharsets.US_ASCII);

  @FuzzTest(maxDuration = "10m")
  void everyBundleRendersOnlyTheMarkupOfThePage(byte[] input) throws IOException {
    Path dir = privateDirectory();
    try {
      splitIntoFiles(input, dir);
      assertOnlyOurMarkup(IncidentPage.render(dir));
    } finally {
      deleteTree(dir);
    }
  }

  @FuzzTest(maxDuration = "5m")
  void untrustedJsonIsAnObjectOrRefusedWithAReason(byte[] input) {
    try {
      Map<String, Object> object = Json.parseUntrusted(input);
      assertNotNull(object);
    } catch (IOException refused) {
      assertNotNull(refused.getMessage(), "a refusal says why");
    }
  }

  /**
   * Hostile files in the shapes a fuzzer reaches slowly, each as every file of a bundle (a seeded
   * generator: the same files on every run): deep nesting, huge numbers, invalid UTF-8, NULs,
   * truncated files, a megabyte array of small objects. The page still renders, and names each JSON
   * file it could not read.
   */
  @Test
  void hostileFilesRenderAPageThatSaysWhatWasNotRead() throws IOException {
    Random random = new Random(26);
    byte[] objects = ("{\"t\": [" + "{},".repeat(350_000) + "{}]}").getBytes(UTF_8);
    byte[] bytes = new byte[4096];
    random.nextBytes(bytes);
    List<byte[]> hostile =
        List.of(
            "[".repeat(100_000).getBytes(StandardCharsets.US_ASCII),
            ("{\"pid\":" + "{\"a\":".repeat(5_000) + "1" + "}".repeat(5_001))
                .getBytes(StandardCharsets.US_ASCII),
            ("{\"pid\": 1" + "0".repeat(100_000) + ", \"capture_ms\": 1e999999}")
                .getBytes(StandardCharsets.US_ASCII),
            "{\"host\": \"\u0000\u001b]0;owned\u0007<script>\"}".getBytes(UTF_8),
            new byte[] {
              '{', '"', 'h', '"', ':', '"', (byte) 0xff, (byte) 0xc0, (byte) 0x80, '"', '}'
            },
            new byte[] {
              '{', '"', 'h', '"', ':', '"', (byte) 0xed, (byte) 0xa0, (byte) 0x80, '"', '}'
            },
            "{\"schema\": \"nativemem-incident/1\", \"pid\": 12".getBytes(UTF_8),
            new byte[0],
            new byte[1024],
            bytes,
            objects);
    for (byte[] content : hostile) {
      Path dir = privateDirectory();
      try {
        for (String name : FILES) {
          Files.write(dir.resolve(name), content);
        }
        String page = IncidentPage.render(dir);
        assertOnlyOurMarkup(page);
        boolean isObject;
        try {
          Json.parseUntrusted(content);
          isObject = true;
        } catch (IOException e) {
          isObject = false;
        }
        if (!isObject) {
          for (String name :
              List.of("timeline.json", "snapshot.json", "profile-report.json", "handles.json")) {
            assertTrue(
                page.contains(name + " is not a JSON object"),
                name
                    + " named as unreadable for content starting "
                    + Html.text(new String(content, 0, Math.min(40, content.length), UTF_8)));
          }
        }
      } finally {
        deleteTree(dir);
      }
    }
  }

  /** Writes the sections of {@code input} ({@code === name} lines, then bytes) into {@code dir}. */
  private static void splitIntoFiles(byte[] input, Path dir) throws IOException {
    List<Integer> starts = new ArrayList<>();
    for (int i = 0; i + SECTION.length <= input.length; i++) {
      if ((i == 0 || input[i - 1] == '\n')
          && Arrays.equals(input, i, i + SECTION.length, SECTION, 0, SECTION.length)) {
        starts.add(i);
      }
    }
    for (int s = 0; s < starts.size(); s++) {
      int nameStart = starts.get(s) + SECTION.length;
      int end = s + 1 < starts.size() ? starts.get(s + 1) : input.length;
      int newline = nameStart;
      while (newline < end && input[newline] != '\n') {
        newline++;
      }
      String name = new String(input, nameStart, newline - nameStart, UTF_8).trim();
      if (FILES.contains(name) && !Files.exists(dir.resolve(name))) {
        Files.write(dir.resolve(name), Arrays.copyOfRange(input, Math.min(newline + 1, end), end));
      }
    }
  }

  private static final Pattern TAG = Pattern.compile("<\\s*/?\\s*([A-Za-z!][A-Za-z0-9-]*)");

  /** The page is whole, and every tag in it is one the page writes (no planted markup). */
  private static void assertOnlyOurMarkup(String page) {
    assertTrue(page.startsWith("<!DOCTYPE html>"), "the page starts as a page");
    assertTrue(page.endsWith("</body></html>\n"), "the page is whole");
    Matcher tags = TAG.matcher(page);
    while (tags.find()) {
      String tag = tags.group(1).toLowerCase(Locale.ROOT);
      assertTrue(IncidentPageTest.OUR_TAGS.contains(tag), "a tag the page does not write: " + tag);
    }
    assertFalse(page.contains("\u001b"), "no terminal escape reaches the page");
    assertEquals(-1, page.indexOf('\u0000'), "no NUL reaches the page");
  }

  private static Path privateDirectory() throws IOException {
    return Files.createTempDirectory(
        "nativemem-fuzz-bundle",
        PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
  }

  private static void deleteTree(Path dir) throws IOException {
    try (Stream<Path> paths = Files.walk(dir)) {
      paths
          .sorted(Comparator.reverseOrder())
          .forEach(
              p -> {
                try {
                  Files.delete(p);
                } catch (IOException e) {
                  throw new UncheckedIOException(e);
                }
              });
    }
  }
}
