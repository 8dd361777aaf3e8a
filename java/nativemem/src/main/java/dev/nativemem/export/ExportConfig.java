package dev.nativemem.export;

import dev.nativemem.base.Setting;
import java.net.URI;
import java.net.URISyntaxException;
import java.time.Duration;
import java.util.Locale;
import java.util.Properties;

/**
 * The continuous export's settings: {@code nativemem.export} ({@code otlp}, {@code pyroscope} or
 * {@code off}), {@code nativemem.export.endpoint} (a base URL; the protocol's path is appended) and
 * {@code nativemem.export.interval} ({@code 60s}, {@code 500ms}, {@code 2m}, or seconds).
 */
final class ExportConfig {
  /** Shorter intervals would make the dump and its analysis a steady cost. */
  static final Duration MIN_INTERVAL = Duration.ofSeconds(1);

  enum Protocol {
    OTLP("/v1development/profiles"),
    PYROSCOPE("/ingest");

    final String path;

    Protocol(String path) {
      this.path = path;
    }

    String jsonName() {
      return name().toLowerCase(Locale.ROOT);
    }
  }

  final Protocol protocol;
  final URI endpoint;
  final Duration interval;

  private ExportConfig(Protocol protocol, URI endpoint, Duration interval) {
    this.protocol = protocol;
    this.endpoint = endpoint;
    this.interval = interval;
  }

  /**
   * The settings in {@code properties}; null when export is off.
   *
   * @throws IllegalArgumentException naming the bad setting and what it takes
   */
  static ExportConfig parse(Properties properties) {
    String mode = Setting.EXPORT.valueIn(properties).trim().toLowerCase(Locale.ROOT);
    Protocol protocol;
    switch (mode) {
      case "off":
      case "":
        return null;
      case "otlp":
        protocol = Protocol.OTLP;
        break;
      case "pyroscope":
        protocol = Protocol.PYROSCOPE;
        break;
      default:
        throw new IllegalArgumentException(
            Setting.EXPORT + "=" + mode + ": use otlp, pyroscope or off");
    }
    String base = Setting.EXPORT_ENDPOINT.valueIn(properties);
    if (base == null || base.trim().isEmpty()) {
      throw new IllegalArgumentException(
          Setting.EXPORT
              + "="
              + mode
              + " needs "
              + Setting.EXPORT_ENDPOINT
              + ", e.g. http://otel-collector:4318 (OTLP/HTTP) or http://pyroscope:4040");
    }
    return new ExportConfig(
        protocol,
        endpoint(base.trim(), protocol),
        interval(Setting.EXPORT_INTERVAL.valueIn(properties)));
  }

  private static URI endpoint(String base, Protocol protocol) {
    URI uri;
    try {
      uri = new URI(base.endsWith("/") ? base.substring(0, base.length() - 1) : base);
    } catch (URISyntaxException e) {
      uri = null;
    }
    if (uri == null
        || uri.getHost() == null
        || !("http".equals(uri.getScheme()) || "https".equals(uri.getScheme()))
        || uri.getRawQuery() != null
        || uri.getRawFragment() != null) {
      throw new IllegalArgumentException(
          Setting.EXPORT_ENDPOINT
              + "="
              + base
              + " is not an http(s) base URL without query, e.g. http://otel-collector:4318");
    }
    return URI.create(uri + protocol.path);
  }

  /** {@code 60s}, {@code 500ms}, {@code 2m}, or a number of seconds. */
  static Duration interval(String text) {
    String t = text.trim().toLowerCase(Locale.ROOT);
    Duration d = null;
    try {
      if (t.endsWith("ms")) {
        d = Duration.ofMillis(Long.parseLong(t.substring(0, t.length() - 2)));
      } else if (t.endsWith("s")) {
        d = Duration.ofSeconds(Long.parseLong(t.substring(0, t.length() - 1)));
      } else if (t.endsWith("m")) {
        d = Duration.ofMinutes(Long.parseLong(t.substring(0, t.length() - 1)));
      } else {
        d = Duration.ofSeconds(Long.parseLong(t));
      }
    } catch (NumberFormatException | ArithmeticException e) {
      d = null;
    }
    if (d == null || d.compareTo(MIN_INTERVAL) < 0) {
      throw new IllegalArgumentException(
          Setting.EXPORT_INTERVAL
              + "="
              + text
              + ": give a duration of 1s or more, such as 60s, 2m or 1500ms");
    }
    return d;
  }
}
