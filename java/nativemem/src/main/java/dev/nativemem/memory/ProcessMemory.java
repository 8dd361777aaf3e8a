package dev.nativemem.memory;

import dev.nativemem.internal.ByteFormat;
import dev.nativemem.internal.JsonBinding;

/** Resident memory of this process as the kernel accounts it ({@code /proc/self/status}). */
public final class ProcessMemory {
  private long rssBytes;
  private long rssAnonBytes;
  private long rssFileBytes;
  private long rssShmemBytes;
  private long peakRssBytes;
  private long virtualBytes;
  private long threads;

  /** Bound by {@link JsonBinding}: the fields are the keys of the native library's JSON. */
  private ProcessMemory() {}

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
    return JsonBinding.write(this);
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
