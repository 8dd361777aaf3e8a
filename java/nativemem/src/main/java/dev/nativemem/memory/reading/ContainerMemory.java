package dev.nativemem.memory.reading;

import dev.nativemem.internal.JsonBinding;

/**
 * A memory cgroup's view, Rust's {@code ContainerMemory}, bound by {@link JsonBinding} (its fields
 * are the keys): the breakdown's {@code container_memory}, and the answer of the native {@code
 * container_memory_of} job, which reads another process's cgroup for {@code attach}.
 */
public final class ContainerMemory {
  private String cgroupVersion;
  private String cgroup;
  private Long limitBytes;
  private String limitCgroup;
  private long usageBytes;
  private Long anonBytes;
  private Long fileBytes;
  private Long oomEvents;
  private Long oomKillEvents;
  private Long failcnt;

  private ContainerMemory() {}

  /** {@code v1} or {@code v2}. */
  public String cgroupVersion() {
    return cgroupVersion;
  }

  /** The cgroup's path. */
  public String cgroup() {
    return cgroup;
  }

  /** The tightest limit on the way up; null without one. */
  public Long limitBytes() {
    return limitBytes;
  }

  /** Where that limit is set; null without one. */
  public String limitCgroup() {
    return limitCgroup;
  }

  public long usageBytes() {
    return usageBytes;
  }

  /** Anonymous memory charged; null where the cgroup does not say. */
  public Long anonBytes() {
    return anonBytes;
  }

  /** Page cache charged; null where the cgroup does not say. */
  public Long fileBytes() {
    return fileBytes;
  }

  public Long oomEvents() {
    return oomEvents;
  }

  public Long oomKillEvents() {
    return oomKillEvents;
  }

  /** Times usage hit the limit (v1's {@code failcnt}); null on v2. */
  public Long failcnt() {
    return failcnt;
  }
}
