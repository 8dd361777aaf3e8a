package dev.nativemem.profile.sampling;

import dev.nativemem.base.NativeMemoryException;
import dev.nativemem.base.text.OwnJar;
import dev.nativemem.internal.ByteFormat;
import dev.nativemem.internal.Json;
import dev.nativemem.internal.JsonBinding;
import dev.nativemem.internal.NativeBridge;
import java.util.Map;

/** The native {@code sampling_status} job: whether heap profiling can run, and how it runs now. */
public final class SamplingStatus {
  private String engine;
  private String engineReason;
  private boolean available;
  private String unavailableReason;
  private boolean active;
  private boolean threadActive;
  private long sampleIntervalBytes;
  private long liveSamples;
  private long liveSampledBytes;
  private long droppedSamples;
  private long hookedEntries;
  private long tableReservedBytes;
  private long tableResidentBytes;

  /** Bound by {@link JsonBinding}: the fields are the keys of the native library's JSON. */
  private SamplingStatus() {}

  /**
   * The status of {@code json} (the {@code sampling_status} job's), its reasons naming this jar.
   */
  public static SamplingStatus of(Map<String, Object> json) {
    SamplingStatus status = JsonBinding.read(SamplingStatus.class, json);
    status.engineReason = OwnJar.withThisJar(status.engineReason);
    status.unavailableReason = OwnJar.withThisJar(status.unavailableReason);
    return status;
  }

  public static SamplingStatus read() {
    return of(Json.parseObject(NativeBridge.call("sampling_status")));
  }

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

  /**
   * This status, where heap profiling can run.
   *
   * @throws NativeMemoryException saying why it cannot, with the settings that fix it
   */
  public SamplingStatus requireAvailable() {
    if (!available) {
      throw new NativeMemoryException(unavailableReason);
    }
    return this;
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
   * Whether samples may be held now, which a new interval would discard: always under jemalloc,
   * whose live samples are not counted here; under import rewriting, while sampling or holding any.
   */
  public boolean mayHoldSamples() {
    return !byImportRewriting() || active || liveSamples > 0;
  }

  /**
   * Whether the import-rewriting engine profiles here: available, and the allocator serving {@code
   * malloc} cannot profile itself. It does not see what libc allocates inside itself.
   */
  public boolean byImportRewriting() {
    return available && "import-rewriting".equals(engine);
  }

  /**
   * The import-rewriting engine's own figures, for people: live samples, import entries hooked,
   * samples dropped, its tables' memory; empty under jemalloc.
   */
  public String engineFigures() {
    if (!byImportRewriting()) {
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
