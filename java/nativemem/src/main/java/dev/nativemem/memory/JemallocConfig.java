package dev.nativemem.memory;

import dev.nativemem.internal.Json;
import java.util.Collections;
import java.util.Map;
import java.util.Optional;

/**
 * How the process's jemalloc is configured, read through its own {@code mallctl}: what was compiled
 * in ({@code config.*}), chosen at start ({@code opt.*}) and set now.
 */
public final class JemallocConfig {
  private final Map<String, Object> json;

  JemallocConfig(Map<String, Object> json) {
    this.json = Collections.unmodifiableMap(json);
    Json.bool(json, "config_prof"); // fail early on a malformed document
  }

  /** {@code config.prof}: heap profiling compiled in. */
  public boolean profilingCompiledIn() {
    return Json.bool(json, "config_prof");
  }

  /** {@code config.stats}: statistics compiled in. */
  public boolean statsCompiledIn() {
    return Json.bool(json, "config_stats");
  }

  /** {@code opt.narenas}: the arena limit chosen at start (4 × CPUs unless configured). */
  public int optNarenas() {
    return (int) Json.number(json, "opt_narenas");
  }

  /** {@code arenas.narenas}: arenas that exist now. */
  public int narenas() {
    return (int) Json.number(json, "arenas_narenas");
  }

  /** {@code opt.prof}: profiling enabled at start; empty when not compiled in. */
  public Optional<Boolean> profilingEnabled() {
    Object v = json.get("opt_prof");
    return v instanceof Boolean ? Optional.of((Boolean) v) : Optional.empty();
  }

  /** {@code prof.active}: sampling now; empty when not compiled in. */
  public Optional<Boolean> profilingActive() {
    Object v = json.get("prof_active");
    return v instanceof Boolean ? Optional.of((Boolean) v) : Optional.empty();
  }

  /** {@code background_thread}: background purging threads on now. */
  public boolean backgroundThread() {
    return Json.bool(json, "background_thread");
  }

  /** {@code arenas.dirty_decay_ms}: -1 means dirty pages are never purged. */
  public long dirtyDecayMs() {
    return Json.number(json, "dirty_decay_ms");
  }

  /** {@code arenas.muzzy_decay_ms}. */
  public long muzzyDecayMs() {
    return Json.number(json, "muzzy_decay_ms");
  }

  /** {@code opt.tcache}: thread caches enabled. */
  public boolean threadCache() {
    return Json.bool(json, "tcache");
  }

  Map<String, Object> asMap() {
    return json;
  }

  public String toJson() {
    return Json.write(json);
  }

  @Override
  public String toString() {
    return "narenas "
        + narenas()
        + " (opt.narenas "
        + optNarenas()
        + "), prof "
        + profilingEnabled().map(String::valueOf).orElse("not compiled in")
        + profilingActive().map(a -> a ? " (active)" : " (inactive)").orElse("")
        + ", background_thread "
        + backgroundThread()
        + ", dirty_decay_ms "
        + dirtyDecayMs()
        + ", muzzy_decay_ms "
        + muzzyDecayMs()
        + ", tcache "
        + threadCache()
        + ", stats "
        + (statsCompiledIn() ? "compiled in" : "not compiled in");
  }
}
