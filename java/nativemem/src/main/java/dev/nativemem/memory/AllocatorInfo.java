package dev.nativemem.memory;

import dev.nativemem.internal.Json;
import java.util.LinkedHashMap;
import java.util.Map;

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

  private final Kind kind;
  private final String version;
  private final String mallocObject;
  private final JemallocConfig jemalloc;

  AllocatorInfo(Map<String, Object> json) {
    this.kind = Kind.valueOf(Json.string(json, "kind").toUpperCase(java.util.Locale.ROOT));
    this.version = Json.string(json, "version");
    this.mallocObject = Json.string(json, "malloc_object");
    Map<String, Object> config = Json.optionalObject(json, "jemalloc");
    this.jemalloc = config == null ? null : new JemallocConfig(config);
  }

  /** jemalloc's configuration; empty when glibc serves {@code malloc}. */
  public java.util.Optional<JemallocConfig> jemallocConfig() {
    return java.util.Optional.ofNullable(jemalloc);
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
    Map<String, Object> json = new LinkedHashMap<>();
    json.put("kind", kind.name().toLowerCase(java.util.Locale.ROOT));
    json.put("version", version);
    json.put("malloc_object", mallocObject);
    json.put("jemalloc", jemalloc == null ? null : jemalloc.asMap());
    return Json.write(json);
  }

  @Override
  public String toString() {
    return kind.name().toLowerCase(java.util.Locale.ROOT)
        + " "
        + version
        + " ("
        + mallocObject
        + ")"
        + (jemalloc == null ? "" : "; " + jemalloc);
  }
}
