package dev.nativemem.cli;

import dev.nativemem.base.Setting;
import dev.nativemem.internal.Json;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.commons.cli.CommandLine;
import org.apache.commons.cli.Options;

/** Lists every {@code nativemem.*} system property: default, value in this JVM, meaning. */
final class SettingsCommand extends CliCommand {
  SettingsCommand() {
    super("settings", "List every nativemem.* system property: default, value, meaning.", "");
  }

  @Override
  Options options() {
    return new Options()
        .addOption(null, "json", false, "Print JSON.")
        .addOption(null, "markdown", false, "Print docs/configuration.md's table.");
  }

  @Override
  int run(CommandLine line) {
    if (line.hasOption("json")) {
      out.println(json());
    } else if (line.hasOption("markdown")) {
      out.print(markdown());
    } else {
      out.print(text());
    }
    return 0;
  }

  /** docs/configuration.md's settings table; a test keeps the page equal to it. */
  static String markdown() {
    StringBuilder out = new StringBuilder("| system property | default | what it does |\n");
    out.append("| --- | --- | --- |\n");
    for (Setting setting : Setting.values()) {
      out.append("| `-D")
          .append(setting.property())
          .append("` | ")
          .append(shownDefault(setting))
          .append(" | ")
          .append(setting.description())
          .append(" |\n");
    }
    return out.toString();
  }

  private static String shownDefault(Setting setting) {
    String shown = setting.shownDefault();
    boolean literal = shown.equals(setting.defaultValue()) || shown.contains("${");
    return literal ? "`" + shown + "`" : shown;
  }

  private static String text() {
    StringBuilder out = new StringBuilder();
    for (Setting setting : Setting.values()) {
      String value = System.getProperty(setting.property());
      out.append(setting.property())
          .append(" = ")
          .append(value != null ? value + " (set)" : setting.shownDefault() + " (default)")
          .append("\n    ")
          .append(setting.description())
          .append('\n');
    }
    return out.toString();
  }

  private static String json() {
    List<Map<String, Object>> settings = new ArrayList<>();
    for (Setting setting : Setting.values()) {
      Map<String, Object> json = new LinkedHashMap<>();
      json.put("property", setting.property());
      json.put("default", setting.defaultValue());
      json.put("shown_default", setting.shownDefault());
      json.put("value", setting.value());
      json.put("set", setting.isSet());
      json.put("description", setting.description());
      settings.add(json);
    }
    Map<String, Object> json = new LinkedHashMap<>();
    json.put("settings", settings);
    return Json.write(json);
  }
}
