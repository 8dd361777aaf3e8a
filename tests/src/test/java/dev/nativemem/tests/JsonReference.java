package dev.nativemem.tests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * docs/json-reference.md's key tables, each after {@code <!-- json keys: SECTION -->}, compared
 * with the objects of real files: every key written is documented, every documented key is written
 * (but those the page says are "present only when" something happened).
 */
final class JsonReference {
  private static final Pattern ROW = Pattern.compile("(?m)^\\| `([a-z0-9_]+)` \\|(.*)\\|\\s*$");

  private JsonReference() {}

  /** The keys of one table, and those the table says are not always written. */
  static Set<String> keys(String section, boolean optionalToo) throws IOException {
    String page = DocPages.read(DocPages.ROOT.resolve("docs/json-reference.md"));
    String marker = "<!-- json keys: " + section + " -->\n";
    int at = page.indexOf(marker);
    assertTrue(at >= 0, "docs/json-reference.md has no table marked " + marker.trim());
    int end = page.indexOf("\n\n", at + marker.length());
    Matcher m = ROW.matcher(page.substring(at + marker.length(), end < 0 ? page.length() : end));
    Set<String> keys = new TreeSet<>();
    while (m.find()) {
      if (optionalToo || !m.group(2).contains("present only when")) {
        keys.add(m.group(1));
      }
    }
    assertTrue(!keys.isEmpty(), "no rows under " + marker.trim());
    return keys;
  }

  /** Each of {@code objects} has exactly the documented keys (optional ones may be absent). */
  static void assertDocuments(String section, Collection<?> objects) throws IOException {
    assertTrue(!objects.isEmpty(), section + ": no object to compare the page with");
    Set<String> all = keys(section, true);
    Set<String> always = keys(section, false);
    for (Object o : objects) {
      Set<String> written = new TreeSet<>();
      for (Object key : ((Map<?, ?>) o).keySet()) {
        written.add(String.valueOf(key));
      }
      List<String> undocumented = new ArrayList<>(written);
      undocumented.removeAll(all);
      assertEquals(
          List.of(),
          undocumented,
          "docs/json-reference.md, " + section + ": keys written, not documented");
      List<String> gone = new ArrayList<>(always);
      gone.removeAll(written);
      assertEquals(
          List.of(), gone, "docs/json-reference.md, " + section + ": keys documented, not written");
    }
  }
}
