package dev.nativemem.apps.harness;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

/** Code blocks of the docs, so tests run what the docs say rather than a copy. */
public final class MarkdownBlocks {
  private MarkdownBlocks() {}

  /** The first {@code ```language} block after the line starting with {@code heading}. */
  public static String first(Path markdown, String heading, String language) throws IOException {
    String text = Files.readString(markdown, StandardCharsets.UTF_8);
    int section = text.indexOf("\n" + heading);
    if (section < 0) {
      throw new IllegalArgumentException(markdown + " has no heading " + heading);
    }
    String fence = "```" + language + "\n";
    int start = text.indexOf(fence, section);
    if (start < 0) {
      throw new IllegalArgumentException(markdown + ": no " + fence.strip() + " after " + heading);
    }
    start += fence.length();
    return text.substring(start, text.indexOf("```", start));
  }
}
