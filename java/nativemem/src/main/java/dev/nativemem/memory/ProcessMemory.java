package dev.nativemem.memory;

import dev.nativemem.internal.ByteFormat;
import dev.nativemem.internal.Json;
import java.util.LinkedHashMap;
import java.util.Map;

/** Resident memory of this process as the kernel accounts it ({@code /proc/self/status}). */
public final class ProcessMemory {
  private final long rssBytes;
  private final long rssAnonBytes;
  private final long rssFileBytes;
  private final long rssShmemBytes;
  private final long peakRssBytes;
  private final long virtualBytes;
  private final long threads;

  ProcessMemory(Map<String, Object> json) {
    this.rssBytes = Json.number(json, "rss_bytes");
    this.rssAnonBytes = Json.number(json, "rss_anon_bytes");
    this.rssFileBytes = Json.number(json, "rss_file_bytes");
    this.rssShmemBytes = Json.number(json, "rss_shmem_bytes");
    this.peakRssBytes = Json.number(json, "vm_hwm_bytes");
    this.virtualBytes = Json.number(json, "vm_size_bytes");
    this.threads = Json.number(json, "threads");
  }

  /** Resident set size (VmRSS), bytes. */
  public long rssBytes() {
    return rssBytes;
  }

  /** Anonymous resident memory (RssAnon), bytes: where malloc'd memory lives. */
  public long rssAnonBytes() {
    return rssAnonBytes;
  }

  /** File-backed resident memory (RssFile), bytes. */
  public long rssFileBytes() {
    return rssFileBytes;
  }

  /** Shared-memory resident memory (RssShmem), bytes. */
  public long rssShmemBytes() {
    return rssShmemBytes;
  }

  /** Peak resident set size (VmHWM), bytes. */
  public long peakRssBytes() {
    return peakRssBytes;
  }

  /** Virtual size (VmSize), bytes. */
  public long virtualBytes() {
    return virtualBytes;
  }

  public long threads() {
    return threads;
  }

  public String toJson() {
    Map<String, Object> json = new LinkedHashMap<>();
    json.put("rss_bytes", rssBytes);
    json.put("rss_anon_bytes", rssAnonBytes);
    json.put("rss_file_bytes", rssFileBytes);
    json.put("rss_shmem_bytes", rssShmemBytes);
    json.put("peak_rss_bytes", peakRssBytes);
    json.put("virtual_bytes", virtualBytes);
    json.put("threads", threads);
    return Json.write(json);
  }

  @Override
  public String toString() {
    return "RSS "
        + ByteFormat.human(rssBytes)
        + " (anon "
        + ByteFormat.human(rssAnonBytes)
        + ", file "
        + ByteFormat.human(rssFileBytes)
        + ", shmem "
        + ByteFormat.human(rssShmemBytes)
        + "), peak "
        + ByteFormat.human(peakRssBytes)
        + ", "
        + threads
        + " threads";
  }
}
