package dev.nativemem.base;

import com.fasterxml.jackson.jr.ob.JSON;
import dev.nativemem.base.text.TerminalText;
import java.io.IOException;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;

/**
 * One thing a person can do about this JVM's native memory, with its reason. Advice is data: the
 * CLI renders it, programs can act on {@link #code()}.
 */
public final class Advice {
  /** How much it matters. */
  public enum Severity {
    INFO,
    WARNING
  }

  private final String code;
  private final Severity severity;
  private final String message;
  private final String suggestedSetting;

  /** A finding: its stable {@code code}, how serious, what was seen, and the setting that helps. */
  public Advice(String code, Severity severity, String message, String suggestedSetting) {
    this.code = code;
    this.severity = severity;
    this.message = message;
    this.suggestedSetting = suggestedSetting;
  }

  /** A stable identifier, e.g. {@code JEMALLOC_ARENAS_EXCEED_CPUS}. */
  public String code() {
    return code;
  }

  public Severity severity() {
    return severity;
  }

  /** What was found and why it matters. */
  public String message() {
    return message;
  }

  /** The setting that addresses it, e.g. {@code MALLOC_CONF=narenas:8}; may be empty. */
  public String suggestedSetting() {
    return suggestedSetting;
  }

  public String toJson() {
    try {
      return JSON.std.asString(asMap());
    } catch (IOException e) {
      throw new NativeMemoryException("cannot write JSON for advice " + code, e);
    }
  }

  Map<String, Object> asMap() {
    Map<String, Object> json = new LinkedHashMap<>();
    json.put("code", code);
    json.put("severity", severity.name().toLowerCase(Locale.ROOT));
    json.put("message", message);
    json.put("suggested_setting", suggestedSetting);
    return json;
  }

  @Override
  public String toString() {
    return TerminalText.escape(
        severity
            + " "
            + code
            + ": "
            + message
            + (suggestedSetting.isEmpty() ? "" : "\n  suggested: " + suggestedSetting));
  }
}
