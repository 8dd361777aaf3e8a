package dev.nativemem.memory;

import dev.nativemem.internal.JsonBinding;
import java.util.Locale;
import java.util.Optional;

/**
 * Which allocator serves this process's {@code malloc}: a jemalloc (found through the process's own
 * {@code mallctl}, living in the same object as {@code malloc}) or glibc.
 */
public final class AllocatorInfo {
  /** The allocator families nativemem tells apart. */
  public enum Kind {
    JEMALLOC,
    GLIBC
  }

  private Kind kind;
  private String version;
  private String mallocObject;
  private JemallocConfig jemalloc;

  /** Bound by {@link JsonBinding}: the fields are the keys of the native library's JSON. */
  private AllocatorInfo() {}

  /** jemalloc's configuration; empty when glibc serves {@code malloc}. */
  public Optional<JemallocConfig> jemallocConfig() {
    return Optional.ofNullable(jemalloc);
  }

  public Kind kind() {
    return kind;
  }

  /** jemalloc's {@code version} string, or glibc's version. */
  public String version() {
    return version;
  }

  /** Path of the shared object that defines {@code malloc} in this process. */
  public String mallocObject() {
    return mallocObject;
  }

  public boolean isJemalloc() {
    return kind == Kind.JEMALLOC;
  }

  public String toJson() {
    return JsonBinding.write(this);
  }

  @Override
  public String toString() {
    return kind.name().toLowerCase(Locale.ROOT)
        + " "
        + version
        + " ("
        + mallocObject
        + ")"
        + (jemalloc == null ? "" : "; " + jemalloc);
  }
}
