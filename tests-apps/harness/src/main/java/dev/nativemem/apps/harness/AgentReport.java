package dev.nativemem.apps.harness;

import com.fasterxml.jackson.jr.ob.JSON;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

/** The agent's JSON handle report, read back: counts per kind, sites, zombie caches. */
public final class AgentReport {
  private final Map<String, Object> root;

  private AgentReport(Map<String, Object> root) {
    this.root = root;
  }

  static AgentReport parse(String json) throws IOException {
    return new AgentReport(JSON.std.mapFrom(json));
  }

  /** A handle report on disk: the agent's at exit, or an incident bundle's handles.json. */
  public static AgentReport read(Path file) throws IOException {
    return parse(Files.readString(file));
  }

  /** One count ({@code created}, {@code closed}, {@code open}, {@code leaked}...) of a kind. */
  public long count(String kind, String count) {
    for (Map<String, Object> k : list(root, "kinds")) {
      if (kind.equals(k.get("kind"))) {
        return number(k, count);
      }
    }
    return 0;
  }

  /** Whether the kinds table has a row named {@code kind}. */
  public boolean hasKind(String kind) {
    return list(root, "kinds").stream().anyMatch(k -> kind.equals(k.get("kind")));
  }

  public List<Site> sites() {
    return list(root, "sites").stream().map(Site::new).collect(Collectors.toList());
  }

  /** Sites of {@code kind} whose headline is {@code frame}. */
  public List<Site> sitesAt(String kind, String frame) {
    return sites().stream()
        .filter(s -> s.kind().equals(kind) && frame.equals(s.headline()))
        .collect(Collectors.toList());
  }

  /** Sites of {@code kind} whose creation stack passes through {@code frame}, at any depth. */
  public List<Site> sitesThrough(String kind, String frame) {
    return sites().stream()
        .filter(s -> s.kind().equals(kind) && s.stack().contains("at " + frame + "\n"))
        .collect(Collectors.toList());
  }

  /** Open (or leaked) handles of {@code kind} whose headline is {@code frame}. */
  public long openAt(String kind, String frame) {
    return sitesAt(kind, frame).stream().mapToLong(Site::open).sum();
  }

  public long leakedAt(String kind, String frame) {
    return sitesAt(kind, frame).stream().mapToLong(Site::leaked).sum();
  }

  public long zombieCapacityBytes() {
    return number(root, "zombie_cache_capacity_bytes");
  }

  /** Capacities of the zombie caches, one entry per cache. */
  public List<Long> zombieCapacities() {
    return list(root, "zombie_caches").stream()
        .map(z -> number(z, "capacity_bytes"))
        .collect(Collectors.toList());
  }

  /** Where each zombie cache was created ({@code cache_created_at}; null where not recorded). */
  public List<String> zombieCachesCreatedAt() {
    return list(root, "zombie_caches").stream()
        .map(
            z ->
                z.get("cache_created_at") instanceof String
                    ? (String) z.get("cache_created_at")
                    : null)
        .collect(Collectors.toList());
  }

  /** Every kind and site with its headline, for assertion messages. */
  public String summary() {
    StringBuilder out = new StringBuilder("kinds:\n");
    for (Map<String, Object> k : list(root, "kinds")) {
      out.append("  ").append(k).append('\n');
    }
    out.append("sites:\n");
    for (Site s : sites()) {
      out.append("  ").append(s).append('\n');
    }
    out.append("zombie capacities: ").append(zombieCapacities()).append('\n');
    return out.toString();
  }

  /** Open and leaked handles of one kind created at one site. */
  public static final class Site {
    private final Map<String, Object> json;

    Site(Map<String, Object> json) {
      this.json = json;
    }

    public String kind() {
      return String.valueOf(json.get("kind"));
    }

    public long open() {
      return number(json, "open");
    }

    public long leaked() {
      return number(json, "leaked");
    }

    /** Open but resting in a pool (the site then names the pool). */
    public long pooled() {
      return number(json, "pooled");
    }

    public String stack() {
      return String.valueOf(json.get("stack"));
    }

    /**
     * The line a person reads first: the report's {@code created_at}, or where the report carries
     * the stack alone, the "created at" frame the text report prints for it.
     */
    public String headline() {
      Object createdAt = json.get("created_at");
      return createdAt instanceof String ? (String) createdAt : Headline.of(stack());
    }

    /** The id of the catalogue's known leak the report names for this site, or null. */
    public String knownId() {
      Object known = json.get("known");
      return known instanceof Map ? String.valueOf(((Map<?, ?>) known).get("id")) : null;
    }

    /** Why the report accepts this site's handles (a {@code known=} option), or null. */
    public String accepted() {
      Object accepted = json.get("accepted");
      return accepted instanceof String ? (String) accepted : null;
    }

    /** The library versions the report says this site's known leak was created by. */
    public List<String> knownVersions() {
      Object known = json.get("known");
      Object versions = known instanceof Map ? ((Map<?, ?>) known).get("versions") : null;
      return versions instanceof List
          ? ((List<?>) versions).stream().map(String::valueOf).collect(Collectors.toList())
          : List.of();
    }

    /** The site's whole JSON object as text (labels, notes: whatever the report adds). */
    public String text() {
      return json.toString();
    }

    @Override
    public String toString() {
      return leaked() + " leaked, " + open() + " open " + kind() + ", created at " + headline();
    }
  }

  @SuppressWarnings("unchecked")
  private static List<Map<String, Object>> list(Map<String, Object> json, String key) {
    Object value = json.get(key);
    if (!(value instanceof List)) {
      throw new AssertionError("the report has no list '" + key + "'");
    }
    return (List<Map<String, Object>>) value;
  }

  private static long number(Map<String, Object> json, String key) {
    Object value = json.get(key);
    if (!(value instanceof Number)) {
      throw new AssertionError("the report has no number '" + key + "' in " + json);
    }
    return ((Number) value).longValue();
  }
}
