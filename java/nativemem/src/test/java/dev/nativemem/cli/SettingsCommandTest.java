package dev.nativemem.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.nativemem.base.Setting;
import dev.nativemem.internal.SettingsInEffect;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The settings table is the one place properties are declared, and docs/configuration.md shows it.
 */
class SettingsCommandTest {
  private static final Path REPO = Paths.get("../..");
  private static final String BEGIN = "<!-- settings table: begin -->\n";
  private static final String END = "<!-- settings table: end -->";

  @Test
  void configurationPageShowsTheTableTheCommandPrints() throws IOException {
    String readme = Files.readString(REPO.resolve("docs/configuration.md"));
    int begin = readme.indexOf(BEGIN);
    int end = readme.indexOf(END);
    assertTrue(begin >= 0 && end > begin, "docs/configuration.md lacks the settings table markers");
    assertEquals(
        SettingsCommand.markdown(),
        readme.substring(begin + BEGIN.length(), end),
        "docs/configuration.md's settings table differs from the code's: paste the output of"
            + " 'java -jar nativemem.jar settings --markdown' between its markers");
  }

  /**
   * No class reads a {@code nativemem.*} system property by its name: every read goes through
   * {@link Setting}, so the table cannot miss one (the demo's parent-to-child marker aside).
   */
  @Test
  void everyPropertyIsReadThroughTheTable() throws IOException {
    Pattern direct =
        Pattern.compile("(getProperty|getBoolean|getInteger|getLong)\\(\\s*\"nativemem\\.");
    List<String> offenders = new ArrayList<>();
    for (String module : new String[] {"java/nativemem", "java/nativemem-junit"}) {
      try (Stream<Path> files = Files.walk(REPO.resolve(module).resolve("src/main/java"))) {
        for (Path file :
            (Iterable<Path>) files.filter(f -> f.toString().endsWith(".java"))::iterator) {
          Matcher m = direct.matcher(new String(Files.readAllBytes(file), StandardCharsets.UTF_8));
          if (m.find()) {
            offenders.add(file.toString());
          }
        }
      }
    }
    assertEquals(List.of(), offenders, "read these through dev.nativemem.base.Setting");
  }

  @Test
  void commandListsEverySettingWithItsValue() {
    String text = captureStdout("settings");
    for (Setting setting : Setting.values()) {
      assertTrue(text.contains(setting.property() + " = "), text);
    }
    String json = captureStdout("settings", "--json");
    assertTrue(json.contains("\"property\":\"nativemem.profile.keep\""), json);
  }

  @Test
  void theLineLoggedAtLoadNamesWhatIsSetAndFlagsTypos() {
    Properties properties = new Properties();
    assertEquals(null, SettingsInEffect.describe(properties));
    properties.setProperty("nativemem.profile.keep", "4");
    properties.setProperty("nativemem.handles.levle", "full");
    properties.setProperty("nativemem.jar", "/opt/nativemem.jar"); // a tool's own property
    assertEquals(
        "nativemem settings: nativemem.profile.keep=4 (others default)",
        SettingsInEffect.describe(properties));
    assertEquals(List.of("nativemem.handles.levle"), SettingsInEffect.unknown(properties));
  }

  private static String captureStdout(String... args) {
    java.io.PrintStream original = System.out;
    java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
    System.setOut(new java.io.PrintStream(out, true, StandardCharsets.UTF_8));
    try {
      assertEquals(0, NativeMemoryCli.run(args));
    } finally {
      System.setOut(original);
    }
    return out.toString(StandardCharsets.UTF_8);
  }
}
