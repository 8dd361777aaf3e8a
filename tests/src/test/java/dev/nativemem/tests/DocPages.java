package dev.nativemem.tests;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * The user-facing Markdown pages (README.md, CONTRIBUTING.md, docs/*.md) read as a reader sees
 * them.
 */
final class DocPages {
  static final Path ROOT = Paths.get(System.getProperty("user.dir")).getParent().normalize();

  private static final Pattern MARKER = Pattern.compile("<!-- (tested|not run): ?(.*?) -->");
  private static final Pattern HEADING = Pattern.compile("^#{1,6} +(.+?) *#*$");

  private DocPages() {}

  /** A fenced block: its language, the line of its fence, and the marker on the line before. */
  static final class Block {
    final String language;
    final int line;
    final String tested;
    final String notRun;
    final String body;

    Block(String language, int line, String tested, String notRun, String body) {
      this.language = language;
      this.line = line;
      this.tested = tested;
      this.notRun = notRun;
      this.body = body;
    }
  }

  static List<Path> pages() throws IOException {
    List<Path> pages = new ArrayList<>();
    pages.add(ROOT.resolve("README.md"));
    pages.add(ROOT.resolve("CONTRIBUTING.md"));
    try (Stream<Path> docs = Files.list(ROOT.resolve("docs"))) {
      pages.addAll(
          docs.filter(p -> p.toString().endsWith(".md")).sorted().collect(Collectors.toList()));
    }
    return pages;
  }

  static List<Path> yamlFiles() throws IOException {
    try (Stream<Path> docs = Files.list(ROOT.resolve("docs"))) {
      return docs.filter(p -> p.toString().endsWith(".yaml")).sorted().collect(Collectors.toList());
    }
  }

  static String read(Path file) throws IOException {
    return new String(Files.readAllBytes(file), StandardCharsets.UTF_8);
  }

  static String name(Path page) {
    return page.startsWith(ROOT) ? ROOT.relativize(page).toString() : page.toString();
  }

  /** Every fenced block of a page, in order. */
  static List<Block> blocks(Path page) throws IOException {
    List<Block> blocks = new ArrayList<>();
    String[] lines = read(page).split("\n", -1);
    for (int i = 0; i < lines.length; i++) {
      if (!lines[i].startsWith("```")) {
        continue;
      }
      String language = lines[i].substring(3).trim();
      int end = i + 1;
      StringBuilder body = new StringBuilder();
      while (end < lines.length && !lines[end].startsWith("```")) {
        body.append(lines[end]).append('\n');
        end++;
      }
      String tested = null;
      String notRun = null;
      Matcher m = MARKER.matcher(i > 0 ? lines[i - 1] : "");
      if (m.matches()) {
        if (m.group(1).equals("tested")) {
          tested = m.group(2).trim();
        } else {
          notRun = m.group(2).trim();
        }
      }
      blocks.add(new Block(language, i + 1, tested, notRun, body.toString()));
      i = end;
    }
    return blocks;
  }

  /** The page without its fenced blocks (a link in a code block is code, not a link). */
  static String withoutFencedBlocks(String text) {
    StringBuilder out = new StringBuilder();
    boolean inside = false;
    for (String line : text.split("\n", -1)) {
      if (line.startsWith("```")) {
        inside = !inside;
      } else if (!inside) {
        out.append(line.replaceAll("`[^`]*`", "``")).append('\n');
      }
    }
    return out.toString();
  }

  /** The anchors GitHub makes of a page's headings (a repeated one gets -1, -2, ...). */
  static Set<String> anchors(Path page) throws IOException {
    Set<String> anchors = new HashSet<>();
    boolean inside = false;
    for (String line : read(page).split("\n", -1)) {
      if (line.startsWith("```")) {
        inside = !inside;
        continue;
      }
      Matcher m = HEADING.matcher(line);
      if (!inside && m.matches()) {
        String slug = slug(m.group(1));
        String anchor = slug;
        for (int n = 1; anchors.contains(anchor); n++) {
          anchor = slug + "-" + n;
        }
        anchors.add(anchor);
      }
    }
    return anchors;
  }

  /** GitHub's heading anchor: lower case, punctuation dropped, spaces to hyphens. */
  static String slug(String heading) {
    return heading.toLowerCase(Locale.ROOT).replaceAll("[^\\p{L}\\p{N} _-]", "").replace(' ', '-');
  }
}
