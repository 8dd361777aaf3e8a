package dev.nativemem;

import dev.nativemem.internal.Json;
import java.io.BufferedReader;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.Map;
import java.util.Objects;

/**
 * A jemalloc heap profile on disk (a jeprof-compatible {@code heap_v2} dump), as written by {@link
 * NativeMemory#dumpProfile()}. Immutable.
 */
public final class HeapProfile {
  private final Path path;
  private final Instant time;
  private final long sampleIntervalBytes;
  private final long sampledBytes;

  private HeapProfile(Path path, Instant time, long sampleIntervalBytes, long sampledBytes) {
    this.path = path;
    this.time = time;
    this.sampleIntervalBytes = sampleIntervalBytes;
    this.sampledBytes = sampledBytes;
  }

  /**
   * Reads the header of a dump. The time comes from the dump's {@code .symbols/symbols.json}
   * sidecar when present, else from the file's modification time.
   *
   * @throws IllegalArgumentException if {@code dump} is not a readable file
   * @throws NativeMemoryException if the file is not a jemalloc {@code heap_v2} dump
   */
  public static HeapProfile open(Path dump) {
    Objects.requireNonNull(dump, "dump");
    if (!Files.isRegularFile(dump)) {
      throw new IllegalArgumentException(
          dump + " is not a file; pass the path of a .heap file written by dumpProfile()");
    }
    String first;
    String second;
    try (BufferedReader in = Files.newBufferedReader(dump, StandardCharsets.ISO_8859_1)) {
      first = String.valueOf(in.readLine());
      second = String.valueOf(in.readLine());
    } catch (IOException e) {
      throw new IllegalArgumentException("cannot read " + dump + ": " + e.getMessage(), e);
    }
    long interval = parseInterval(dump, first);
    long bytes = parseSampledBytes(dump, second);
    return new HeapProfile(dump.toAbsolutePath(), timeOf(dump), interval, bytes);
  }

  /** Where the dump is. */
  public Path path() {
    return path;
  }

  /** When it was taken. */
  public Instant time() {
    return time;
  }

  /** The average bytes between two samples when it was taken ({@code heap_v2/<interval>}). */
  public long sampleIntervalBytes() {
    return sampleIntervalBytes;
  }

  /** The bytes of the sampled allocations still live, before unbiasing ({@code t*:} line). */
  public long sampledBytes() {
    return sampledBytes;
  }

  @Override
  public String toString() {
    return "heap profile "
        + path
        + " ("
        + time
        + ", sample interval "
        + sampleIntervalBytes
        + " bytes, "
        + sampledBytes
        + " sampled bytes)";
  }

  private static long parseInterval(Path dump, String line) {
    String prefix = "heap_v2/";
    if (!line.startsWith(prefix)) {
      throw notAProfile(dump, "first line is '" + line + "', expected 'heap_v2/<interval>'");
    }
    try {
      return Long.parseLong(line.substring(prefix.length()).trim());
    } catch (NumberFormatException e) {
      throw notAProfile(dump, "first line is '" + line + "'");
    }
  }

  /** {@code t*: <objects>: <bytes> [<objects>: <bytes>]}. */
  private static long parseSampledBytes(Path dump, String line) {
    String trimmed = line.trim();
    String[] parts = trimmed.split(":");
    if (!trimmed.startsWith("t*:") || parts.length < 3) {
      throw notAProfile(dump, "second line is '" + line + "', expected 't*: <objects>: <bytes>'");
    }
    try {
      return Long.parseLong(parts[2].trim().split("\\s+")[0]);
    } catch (NumberFormatException e) {
      throw notAProfile(dump, "second line is '" + line + "'");
    }
  }

  private static NativeMemoryException notAProfile(Path dump, String why) {
    return new NativeMemoryException(dump + " is not a jemalloc heap_v2 profile: " + why);
  }

  private static Instant timeOf(Path dump) {
    Path symbols = dump.resolveSibling(dump.getFileName() + ".symbols").resolve("symbols.json");
    try {
      if (Files.isRegularFile(symbols)) {
        Map<String, Object> json =
            Json.parseObject(new String(Files.readAllBytes(symbols), StandardCharsets.UTF_8));
        return Instant.ofEpochMilli(Json.number(json, "time_ms"));
      }
      return Files.getLastModifiedTime(dump).toInstant();
    } catch (IOException | NativeMemoryException e) {
      return Instant.EPOCH;
    }
  }
}
