package dev.nativemem.profile.sampling;

import dev.nativemem.base.text.OwnJar;
import dev.nativemem.internal.ByteFormat;
import dev.nativemem.internal.Json;
import dev.nativemem.internal.NativeBridge;
import java.util.Map;

/** The native {@code sampling_status} job: whether heap profiling can run, and how it runs now. */
public final class SamplingStatus {
  private final String engine;
  private final String engineReason;
  private final boolean available;
  private final String unavailableReason;
  private final boolean active;
  private final boolean threadActive;
  private final long sampleIntervalBytes;
  private final long liveSamples;
  private final long liveSampledBytes;
  private final long droppedSamples;
  private final long hookedEntries;
  private final long tableReservedBytes;
  private final long tableResidentBytes;

  /** Reads the native JSON; throws naming a missing key. */
  public SamplingStatus(Map<String, Object> json) {
    this.engine = Json.string(json, "engine");
    this.engineReason = OwnJar.withThisJar(Json.string(json, "engine_reason"));
    this.available = Json.bool(json, "available");
    this.unavailableReason = OwnJar.withThisJar(Json.string(json, "unavailable_reason"));
    this.active = Json.bool(json, "active");
    this.threadActive = Json.bool(json, "thread_active");
    this.sampleIntervalBytes = Json.number(json, "sample_interval_bytes");
    this.liveSamples = Json.number(json, "live_samples");
    this.liveSampledBytes = Json.number(json, "live_sampled_bytes");
    this.droppedSamples = Json.number(json, "dropped_samples");
    this.hookedEntries = Json.number(json, "hooked_entries");
    this.tableReservedBytes = Json.number(json, "table_reserved_bytes");
    this.tableResidentBytes = Json.number(json, "table_resident_bytes");
  }

  /** Reads it now. */
  public static SamplingStatus read() {
    return new SamplingStatus(Json.parseObject(NativeBridge.call("sampling_status")));
  }

  /** The engine that profiles this process: {@code jemalloc} or {@code import-rewriting}. */
  public String engine() {
    return engine;
  }

  /** Why that engine, and what it does not see; empty when no engine can run. */
  public String engineReason() {
    return engineReason;
  }

  public boolean available() {
    return available;
  }

  /** Why not, with the settings that fix it; empty when available. */
  public String unavailableReason() {
    return unavailableReason;
  }

  public boolean active() {
    return active;
  }

  public boolean threadActive() {
    return threadActive;
  }

  public long sampleIntervalBytes() {
    return sampleIntervalBytes;
  }

  /**
   * The import-rewriting engine's own figures, for people: live samples, import entries hooked,
   * samples dropped, its tables' memory; empty under jemalloc.
   */
  public String engineFigures() {
    if (!"import-rewriting".equals(engine)) {
      return "";
    }
    return liveSamples
        + " live samples ("
        + liveSampledBytes
        + " bytes as sampled), "
        + hookedEntries
        + " import entries hooked, "
        + droppedSamples
        + " samples dropped (table full), tables "
        + ByteFormat.human(tableResidentBytes)
        + " resident of "
        + ByteFormat.human(tableReservedBytes)
        + " reserved";
  }
}
