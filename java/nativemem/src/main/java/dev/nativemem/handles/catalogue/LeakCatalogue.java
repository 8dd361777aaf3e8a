package dev.nativemem.handles.catalogue;

import dev.nativemem.internal.Json;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The catalogue of known native leaks ({@code dev/nativemem/known-leaks.json} in the jar): which
 * kind, created under which frame, in which library versions, what it costs and what to do. Every
 * check reads this one list: reports, advice, {@code HandleScope.check} and the JUnit extension.
 *
 * <p>The versions are those actually loaded: when a creation stack is captured, each frame whose
 * class an entry names is asked its library's version ({@link LibraryVersions}), so a site matches
 * only where that version is affected.
 */
public final class LeakCatalogue {
  static final String RESOURCE = "/dev/nativemem/known-leaks.json";

  /**
   * The classes whose library version a versioned entry depends on. Recording a stack checks its
   * frames against this set only, so the catalogue (and jackson-jr, whose first use costs about 40
   * ms of CPU) is read when a stack holds one of them, or a report is made, not at the first
   * recorded handle of every JVM. LeakCatalogueTest checks that it names exactly the catalogue's.
   */
  static final Set<String> VERSIONED_CLASSES =
      Set.of(
          "org.apache.flink.state.rocksdb.sstmerge.Compactor",
          "org.apache.flink.contrib.streaming.state.sstmerge.Compactor",
          "org.apache.flink.state.rocksdb.restore.RocksDBHandle",
          "org.apache.flink.contrib.streaming.state.restore.RocksDBHandle",
          "org.apache.kafka.streams.state.internals.RocksDBStore",
          "org.apache.flink.state.forst.ForStGeneralMultiGetOperation",
          "org.forstdb.RocksDB",
          "org.apache.flink.util.InstantiationUtil");

  /** Read at the first use: {@link #VERSIONED_CLASSES}. */
  private static final class BuiltIn {
    static final LeakCatalogue CATALOGUE = loadBuiltIn();
  }

  private final List<Entry> entries;

  /** Entries with affected versions, by the class of each of their frames. */
  private final Map<String, List<Entry>> versionedByClass = new LinkedHashMap<>();

  /** Versions read from the classes the versioned entries name; "" where a jar states none. */
  private final Map<String, Set<String>> versionsSeen = new ConcurrentHashMap<>();

  private final ClassValue<Boolean> noted =
      new ClassValue<Boolean>() {
        @Override
        protected Boolean computeValue(Class<?> type) {
          List<Entry> named = versionedByClass.get(type.getName());
          if (named == null) {
            return false;
          }
          Entry entry = named.get(0);
          String version = LibraryVersions.of(type, entry.artifact, entry.versionResource);
          versionsSeen
              .computeIfAbsent(type.getName(), k -> ConcurrentHashMap.newKeySet())
              .add(version == null ? "" : version);
          return true;
        }
      };

  private LeakCatalogue(List<Entry> entries) {
    this.entries = Collections.unmodifiableList(entries);
    for (Entry entry : entries) {
      if (!entry.affected.isEmpty()) {
        for (String frame : entry.frames) {
          versionedByClass.computeIfAbsent(classOf(frame), k -> new ArrayList<>()).add(entry);
        }
      }
    }
  }

  /** The catalogue shipped in the jar. */
  public static LeakCatalogue get() {
    return BuiltIn.CATALOGUE;
  }

  /** Notes the version of {@code type}'s library if a versioned entry depends on it. */
  public static void noteIfVersioned(Class<?> type) {
    if (VERSIONED_CLASSES.contains(type.getName())) {
      get().note(type);
    }
  }

  /** The classes this catalogue's versioned entries name. */
  Set<String> versionedClasses() {
    return versionedByClass.keySet();
  }

  private static LeakCatalogue loadBuiltIn() {
    try (InputStream in = LeakCatalogue.class.getResourceAsStream(RESOURCE)) {
      if (in == null) {
        throw new IllegalStateException(RESOURCE + " is missing from the nativemem jar");
      }
      return parse(new String(in.readAllBytes(), StandardCharsets.UTF_8));
    } catch (IOException e) {
      throw new IllegalStateException("cannot read " + RESOURCE + ": " + e, e);
    }
  }

  /**
   * Parses a catalogue.
   *
   * @throws IllegalArgumentException naming the entry and field that is missing or wrong
   */
  public static LeakCatalogue parse(String json) {
    Map<String, Object> root;
    try {
      root = Json.parseObject(json);
    } catch (RuntimeException e) {
      throw new IllegalArgumentException("known-leak catalogue is not a JSON object: " + e, e);
    }
    List<Entry> entries = new ArrayList<>();
    Set<String> ids = new LinkedHashSet<>();
    for (Map<String, Object> e : Json.objects(root, "entries")) {
      Entry entry = new Entry(e);
      if (!ids.add(entry.id)) {
        throw new IllegalArgumentException("known-leak catalogue: id '" + entry.id + "' twice");
      }
      entries.add(entry);
    }
    return new LeakCatalogue(entries);
  }

  public List<Entry> entries() {
    return entries;
  }

  /** The ids of the entries, in catalogue order. */
  public List<String> ids() {
    List<String> ids = new ArrayList<>();
    for (Entry entry : entries) {
      ids.add(entry.id);
    }
    return ids;
  }

  /** The entry with this id, or null. */
  public Entry entry(String id) {
    for (Entry entry : entries) {
      if (entry.id.equals(id)) {
        return entry;
      }
    }
    return null;
  }

  /** Called for each frame of a stack being captured: reads the version once per class. */
  void note(Class<?> type) {
    if (!versionedByClass.isEmpty()) {
      noted.get(type);
    }
  }

  /**
   * The first entry that recognises handles of {@code kind} created with {@code stack}, or null.
   */
  public Match match(String kind, String stack) {
    Set<String> frames = frames(stack);
    for (Entry entry : entries) {
      Match match = entry.match(kind, frames, versionsSeen);
      if (match != null) {
        return match;
      }
    }
    return null;
  }

  /** Each entry against the classes {@code loader} loads: the catalogue's self-check. */
  public List<CatalogueCheck> inspect(ClassLoader loader) {
    return CatalogueCheck.of(entries, loader);
  }

  static String classOf(String frame) {
    return frame.substring(0, frame.lastIndexOf('.'));
  }

  /**
   * The {@code class.method} of each {@code at} line of a creation stack, without module or class
   * loader prefix ({@code java.base/}) and without file and line.
   */
  static Set<String> frames(String stack) {
    Set<String> frames = new LinkedHashSet<>();
    for (String line : stack.split("\n")) {
      String frame = line.trim();
      if (!frame.startsWith("at ")) {
        continue;
      }
      int paren = frame.indexOf('(');
      frame = frame.substring(3, paren < 0 ? frame.length() : paren);
      frames.add(frame.substring(frame.lastIndexOf('/') + 1));
    }
    return frames;
  }

  /** One known leak. */
  public static final class Entry {
    private final String id;
    private final String link;
    private final String summary;
    private final String kind;
    private final List<String> frames;
    private final String library;
    private final String artifact;
    private final String versionResource;
    private final List<Range> affected;
    private final String fixedIn;
    private final String cost;
    private final String workaround;
    private final boolean accepted;

    Entry(Map<String, Object> json) {
      this.id = text(json, "id", null);
      this.link = text(json, "link", id);
      this.summary = text(json, "summary", id);
      this.kind = text(json, "kind", id);
      List<String> frames = new ArrayList<>();
      Object list = json.get("frames");
      if (list instanceof List) {
        for (Object frame : (List<?>) list) {
          if (!(frame instanceof String) || ((String) frame).lastIndexOf('.') < 1) {
            throw new IllegalArgumentException(
                "known-leak catalogue: " + id + ": frame '" + frame + "' is not class.method");
          }
          frames.add((String) frame);
        }
      }
      if (frames.isEmpty()) {
        throw new IllegalArgumentException("known-leak catalogue: " + id + " has no frames");
      }
      this.frames = Collections.unmodifiableList(frames);
      this.library = text(json, "library", id);
      this.artifact = json.get("artifact") instanceof String ? (String) json.get("artifact") : null;
      this.versionResource =
          json.get("version_resource") instanceof String
              ? (String) json.get("version_resource")
              : null;
      List<Range> ranges = new ArrayList<>();
      for (Map<String, Object> r : Json.objects(json, "affected")) {
        ranges.add(new Range(r, id));
      }
      this.affected = Collections.unmodifiableList(ranges);
      this.fixedIn = text(json, "fixed_in", id);
      this.cost = text(json, "cost", id);
      this.workaround = text(json, "workaround", id);
      this.accepted = Boolean.TRUE.equals(json.get("accepted"));
    }

    private static String text(Map<String, Object> json, String key, String id) {
      Object value = json.get(key);
      if (!(value instanceof String) || ((String) value).trim().isEmpty()) {
        throw new IllegalArgumentException(
            "known-leak catalogue: " + (id == null ? "an entry" : id) + " lacks '" + key + "'");
      }
      return (String) value;
    }

    Match match(String kind, Set<String> stackFrames, Map<String, Set<String>> versionsSeen) {
      if (!this.kind.equals(kind)) {
        return null;
      }
      for (String frame : frames) {
        if (!stackFrames.contains(frame)) {
          continue;
        }
        if (affected.isEmpty()) {
          return new Match(this, Collections.emptySet(), false);
        }
        Set<String> seen = versionsSeen.getOrDefault(classOf(frame), Collections.emptySet());
        Set<String> hit = new LinkedHashSet<>();
        boolean unknown = seen.isEmpty() || seen.contains("");
        for (String version : seen) {
          if (!version.isEmpty() && affects(version)) {
            hit.add(version);
          }
        }
        if (!hit.isEmpty() || unknown) {
          return new Match(this, hit, hit.isEmpty());
        }
      }
      return null;
    }

    /** Whether the entry names affected versions (else it holds in every version). */
    boolean versioned() {
      return !affected.isEmpty();
    }

    String artifact() {
      return artifact;
    }

    String versionResource() {
      return versionResource;
    }

    /** Whether {@code version} of the library has this leak. */
    public boolean affects(String version) {
      for (Range range : affected) {
        if (range.contains(version)) {
          return true;
        }
      }
      return affected.isEmpty();
    }

    public String id() {
      return id;
    }

    public String link() {
      return link;
    }

    public String summary() {
      return summary;
    }

    public String kind() {
      return kind;
    }

    public List<String> frames() {
      return frames;
    }

    public String library() {
      return library;
    }

    public String fixedIn() {
      return fixedIn;
    }

    public String cost() {
      return cost;
    }

    public String workaround() {
      return workaround;
    }

    /** Whether checks accept it without failing (nothing the application can close). */
    public boolean accepted() {
      return accepted;
    }

    @Override
    public String toString() {
      return id + " (" + kind + " at " + String.join(" or ", frames) + ")";
    }
  }

  /** Affected versions: from (inclusive), before (exclusive) or through (inclusive). */
  static final class Range {
    private final String from;
    private final String before;
    private final String through;

    Range(Map<String, Object> json, String id) {
      this.from = (String) json.get("from");
      this.before = (String) json.get("before");
      this.through = (String) json.get("through");
      if (before != null && through != null || from == null && before == null && through == null) {
        throw new IllegalArgumentException(
            "known-leak catalogue: " + id + ": a range needs from, and before or through: " + json);
      }
    }

    boolean contains(String version) {
      return (from == null || LibraryVersions.compare(version, from) >= 0)
          && (before == null || LibraryVersions.compare(version, before) < 0)
          && (through == null || LibraryVersions.compare(version, through) <= 0);
    }
  }

  /** What an entry names as its library when the leak is a caller's bug, not a library's. */
  public static final String YOUR_CODE = "your code";

  /**
   * An entry that recognised a site, with the affected versions loaded (empty: not known) and, for
   * an entry that blames the caller ({@link #YOUR_CODE}), the library whose code the site's
   * application frame is in, when it is one.
   */
  public static final class Match {
    private final Entry entry;
    private final Set<String> versions;
    private final boolean versionUnknown;
    private final String owner;

    Match(Entry entry, Set<String> versions, boolean versionUnknown) {
      this(entry, versions, versionUnknown, null);
    }

    private Match(Entry entry, Set<String> versions, boolean versionUnknown, String owner) {
      this.entry = entry;
      this.versions = Collections.unmodifiableSet(versions);
      this.versionUnknown = versionUnknown;
      this.owner = owner;
    }

    /**
     * This match for a site whose first application frame is in the library {@code owner} (as its
     * jar names itself: {@code group:artifact version}); itself when {@code owner} is null or the
     * entry already names a library.
     */
    public Match ownedBy(String owner) {
      return owner == null || !entry.library.equals(YOUR_CODE)
          ? this
          : new Match(entry, versions, versionUnknown, owner);
    }

    public Entry entry() {
      return entry;
    }

    /** The affected versions of the library that created these handles. */
    public Set<String> versions() {
      return versions;
    }

    /** Whose code has the leak: the entry's library, or the library the site's frame is in. */
    public String library() {
      return owner == null ? entry.library : owner;
    }

    /** Where it is fixed: the entry's word, or for a library's site, that library. */
    String fixedIn() {
      if (owner == null) {
        return entry.fixedIn;
      }
      int space = owner.indexOf(' ');
      return "a release of " + (space < 0 ? owner : owner.substring(0, space)) + " that closes it";
    }

    /** What to do now: the entry's workaround, or for a library's site, what its user can do. */
    String workaround() {
      return owner == null
          ? entry.workaround
          : "the handle is made and left open inside "
              + owner
              + ", not in your code: upgrade it, or report it to its maintainers with this site;"
              + " meanwhile a garbage collection frees what its cleaner reaches";
    }

    /** One line: what it is, the version you run, where it is fixed. */
    public String label() {
      StringBuilder text = new StringBuilder(entry.summary).append(" (").append(entry.id);
      if (owner != null) {
        text.append("; in ").append(owner);
      } else if (!versions.isEmpty()) {
        text.append("; you run ").append(entry.library).append(' ');
        text.append(String.join(" and ", versions));
      } else if (versionUnknown) {
        text.append("; the ").append(entry.library).append(" jar states no version");
      }
      return text.append("; fixed in: ").append(fixedIn()).append(')').toString();
    }

    /** What it costs and what to do now. */
    public String advice() {
      return "costs: " + entry.cost + "; do now: " + workaround() + " (" + entry.link + ")";
    }

    /** The fields the JSON report carries. */
    public Map<String, Object> toMap() {
      Map<String, Object> m = new LinkedHashMap<>();
      m.put("id", entry.id);
      m.put("link", entry.link);
      m.put("library", library());
      m.put("versions", new ArrayList<>(versions));
      m.put("fixed_in", fixedIn());
      m.put("cost", entry.cost);
      m.put("workaround", workaround());
      m.put("accepted", entry.accepted);
      m.values().removeIf(java.util.Objects::isNull); // what the entry does not say is left out
      return m;
    }
  }
}
