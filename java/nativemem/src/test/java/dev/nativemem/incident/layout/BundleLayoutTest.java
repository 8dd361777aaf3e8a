package dev.nativemem.incident.layout;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.nativemem.incident.IncidentPage;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * The bundle's file names are declared once in Java (the writer and the page read {@link
 * BundleLayout}) and once in Rust (the analysis, {@code profile/bundle_layout.rs}): each Rust name
 * is the Java constant of the same name.
 */
class BundleLayoutTest {
  private static final Path RUST =
      Paths.get(System.getProperty("user.dir"))
          .resolve("../../rust/nativemem/src/profile/bundle_layout.rs")
          .normalize();

  @Test
  void theRustNamesAreTheJavaNames() throws Exception {
    String source = new String(Files.readAllBytes(RUST), StandardCharsets.UTF_8);
    Map<String, String> rust = new LinkedHashMap<>();
    Matcher m = Pattern.compile("pub const (\\w+): &str = \"([^\"]*)\";").matcher(source);
    while (m.find()) {
      rust.put(m.group(1), m.group(2));
    }
    assertTrue(rust.containsKey("MANIFEST") && rust.containsKey("PROFILE"), rust.toString());
    for (Map.Entry<String, String> name : rust.entrySet()) {
      Field java = BundleLayout.class.getField(name.getKey());
      assertEquals(java.get(null), name.getValue(), "BundleLayout." + name.getKey() + " vs Rust");
    }
  }

  @Test
  void everyFileHasItsOwnName() throws Exception {
    Set<Object> seen = new HashSet<>();
    for (Field f : BundleLayout.class.getFields()) {
      if (Modifier.isStatic(f.getModifiers())) {
        assertTrue(seen.add(f.get(null)), f.getName() + " repeats " + f.get(null));
      }
    }
    assertEquals(IncidentPage.FILE_NAME, BundleLayout.PAGE);
  }
}
