package dev.nativemem.watch;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A part read and written in one step: the value comes back when it was read (even if writing it
 * failed), null when reading it failed; every failure removes the file and is listed with why.
 */
class BundlePartsTest {
  @TempDir Path temp;

  @Test
  void aPartReadAndWrittenGivesItsValueBackOrSaysWhyNot() throws Exception {
    try (WatchDirectory watch = WatchDirectory.open(temp)) {
      BundleParts parts = new BundleParts(watch.handle);

      assertEquals(42, parts.text("read.json", "read", () -> 42, v -> "{\"v\":" + v + "}"));
      assertEquals("{\"v\":42}", Files.readString(temp.resolve("read.json")));
      assertEquals(List.of(Map.of("name", "read.json", "what", "read")), parts.files);

      Integer unread =
          parts.text(
              "unread.json",
              "unread",
              () -> {
                throw new IllegalStateException("no reading");
              },
              v -> "never");
      assertNull(unread);
      assertFalse(Files.exists(temp.resolve("unread.json")), "a failed part leaves no file");

      Integer unwritten =
          parts.text(
              "unwritten.json",
              "unwritten",
              () -> 7,
              v -> {
                throw new IllegalStateException("no text");
              });
      assertEquals(7, unwritten, "read, so the value serves the parts after it");
      assertFalse(Files.exists(temp.resolve("unwritten.json")));

      assertNull(
          parts.made(
              "dump.heap",
              "dump",
              () -> {
                throw new IllegalArgumentException("no dump");
              }));
      assertEquals("made", parts.made("made.heap", "made", () -> "made"));

      assertEquals(
          List.of(
              Map.of("what", "unread (unread.json)", "why", "IllegalStateException: no reading"),
              Map.of("what", "unwritten (unwritten.json)", "why", "IllegalStateException: no text"),
              Map.of("what", "dump (dump.heap)", "why", "IllegalArgumentException: no dump")),
          parts.missing);
      assertEquals(
          List.of("read.json", "made.heap"),
          parts.files.stream().map(f -> ((Map<?, ?>) f).get("name")).collect(Collectors.toList()));
    }
  }
}
