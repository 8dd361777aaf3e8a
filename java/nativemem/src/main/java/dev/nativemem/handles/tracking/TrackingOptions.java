package dev.nativemem.handles.tracking;

import dev.nativemem.base.Setting;
import dev.nativemem.base.TrackingLevel;
import dev.nativemem.handles.catalogue.LeakCatalogue;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Properties;
import java.util.Set;

/**
 * What to track, from agent arguments ({@code -javaagent:nativemem.jar=level=full,interval=64}) and
 * system properties ({@code -Dnativemem.handles.level=full}); agent arguments win.
 *
 * <p>Keys: {@code level} (off, counts, sampled, full), {@code interval} (sampled: one stack per N
 * handles), {@code include} and {@code exclude} (kinds separated by {@code +}, such as {@code
 * ColumnFamilyOptions+Inflater}, or the groups {@code rocksdb}, {@code forst} and {@code zip}),
 * {@code report} (file written at exit; JSON when it ends in {@code .json}, text otherwise), {@code
 * skip} (class name prefixes separated by {@code +} whose frames are never the "created at" line:
 * the application's own wrappers and frameworks), {@code known} (leaks accepted in this JVM,
 * separated by {@code +}: ids of the known-leak catalogue, such as {@code FLINK-39923}, or kinds);
 * the memory watch's keys pass through: {@code watch=on} and {@code watch.<name>=...} stand for
 * {@code -Dnativemem.watch=on} and {@code -Dnativemem.watch.<name>=...} ({@link #watchSettings()}).
 */
public final class TrackingOptions {
  static final List<String> KEYS =
      Arrays.asList("level", "interval", "include", "exclude", "report", "skip", "known");
  public static final String ROCKSDB_GROUP = "rocksdb";

  /** ForSt's kinds ({@code org.forstdb}, {@link RocksFamily#FORST}). */
  public static final String FORST_GROUP = "forst";

  public static final String ZIP_GROUP = "zip";

  /**
   * What advice says to see creation sites the level did not record, with what it costs: the
   * registry's site table is capped ({@code MAX_SITE_BYTES} in the Rust registry) and keeps the
   * stacks of live handles; the time per creation is in docs/performance.md.
   */
  public static final String FULL_ADVICE =
      "run the agent with level=full (it keeps the creation stack of every live handle: at most"
          + " 16 MiB of native memory, the report's tracker memory says how much, and about 3 us"
          + " per zlib stream created)";

  static final List<String> ZIP_KINDS = Arrays.asList("Inflater", "Deflater");

  private final TrackingLevel level;
  private final int interval;
  private final Set<String> include;
  private final Set<String> exclude;
  private final Path reportFile;
  private final List<String> skip;
  private final List<String> known;
  private Properties watchSettings = new Properties();

  private TrackingOptions(
      TrackingLevel level,
      int interval,
      Set<String> include,
      Set<String> exclude,
      Path report,
      List<String> skip,
      List<String> known) {
    this.level = level;
    this.interval = interval;
    this.include = include;
    this.exclude = exclude;
    this.reportFile = report;
    this.skip = skip;
    this.known = known;
  }

  /** Used without the agent: counts only what the application registers with {@code track}. */
  public static TrackingOptions defaults() {
    return parse(null, System.getProperties());
  }

  /**
   * Parses agent arguments over system properties.
   *
   * @throws IllegalArgumentException naming the bad option and the valid ones
   */
  public static TrackingOptions parse(String agentArgs, Properties properties) {
    String level = Setting.HANDLES_LEVEL.valueIn(properties);
    String interval = Setting.HANDLES_INTERVAL.valueIn(properties);
    String include = Setting.HANDLES_INCLUDE.valueIn(properties);
    String exclude = Setting.HANDLES_EXCLUDE.valueIn(properties);
    String report = Setting.HANDLES_REPORT.valueIn(properties);
    String skip = Setting.HANDLES_SKIP.valueIn(properties);
    String known = Setting.HANDLES_KNOWN.valueIn(properties);
    Properties watch = new Properties();
    if (agentArgs != null && !agentArgs.trim().isEmpty()) {
      for (String pair : agentArgs.split(",")) {
        int eq = pair.indexOf('=');
        String key = (eq < 0 ? pair : pair.substring(0, eq)).trim();
        String value = eq < 0 ? "" : pair.substring(eq + 1).trim();
        if (key.equals("watch")
            || key.startsWith("watch.")
            || key.equals("export")
            || key.startsWith("export.")) {
          String property = "nativemem." + key;
          if (!Setting.of(property).isPresent()) {
            throw new IllegalArgumentException(
                "unknown option '"
                    + key
                    + "'; the watch's options are "
                    + WATCH_KEYS
                    + ", the export's export, export.endpoint, export.interval");
          }
          watch.setProperty(property, value);
          continue;
        }
        switch (key) {
          case "level":
            level = value;
            break;
          case "interval":
            interval = value;
            break;
          case "include":
            include = value;
            break;
          case "exclude":
            exclude = value;
            break;
          case "report":
            report = value;
            break;
          case "skip":
            skip = value;
            break;
          case "known":
            known = value;
            break;
          default:
            throw new IllegalArgumentException(
                "unknown option '"
                    + key
                    + "'; valid options are "
                    + String.join(", ", KEYS)
                    + ", watch, watch.<name>, export, export.endpoint, export.interval");
        }
      }
    }
    int every;
    try {
      every = Integer.parseInt(interval.trim());
    } catch (NumberFormatException e) {
      every = 0;
    }
    if (every < 1) {
      throw new IllegalArgumentException(
          "interval '" + interval + "' must be a whole number of 1 or more");
    }
    TrackingOptions options =
        new TrackingOptions(
            TrackingLevel.of(level),
            every,
            kinds(include),
            kinds(exclude),
            report.trim().isEmpty() ? null : Paths.get(report.trim()),
            Collections.unmodifiableList(new ArrayList<>(kinds(skip))),
            acceptedLeaks(known));
    options.watchSettings = watch;
    return options;
  }

  /**
   * The {@code known} list, each an id of the catalogue or a kind. A word shaped like an issue id
   * ({@code FLINK-1}, {@code owner/repo#1}) that the catalogue lacks is refused rather than taken
   * for a kind, so a typo does not silently accept nothing. The catalogue is read only when the
   * list names something (reading it costs start-up time).
   */
  private static List<String> acceptedLeaks(String list) {
    List<String> known = new ArrayList<>(kinds(list));
    for (String word : known) {
      boolean idShaped = word.matches("[A-Za-z]+-\\d+") || word.contains("#") || word.contains("/");
      if (idShaped && LeakCatalogue.get().entry(word) == null) {
        throw new IllegalArgumentException(
            "known: no entry '"
                + word
                + "' in nativemem's catalogue of known leaks (java -jar nativemem.jar known-leaks"
                + " lists them); its ids are "
                + LeakCatalogue.get().ids());
      }
    }
    return Collections.unmodifiableList(known);
  }

  /** The watch's {@code nativemem.watch*} keys, for the agent's arguments' messages. */
  private static final String WATCH_KEYS = watchKeys();

  private static String watchKeys() {
    List<String> keys = new ArrayList<>();
    for (Setting setting : Setting.values()) {
      if (setting.property().startsWith("nativemem.watch")) {
        keys.add(setting.property().substring("nativemem.".length()));
      }
    }
    return String.join(", ", keys);
  }

  /**
   * The {@code watch} and {@code watch.*} agent arguments as {@code nativemem.watch*} properties
   * (for the memory watch; they win over system properties).
   */
  public Properties watchSettings() {
    Properties copy = new Properties();
    copy.putAll(watchSettings);
    return copy;
  }

  private static Set<String> kinds(String list) {
    Set<String> kinds = new LinkedHashSet<>();
    for (String kind : list.split("[+;]")) {
      if (!kind.trim().isEmpty()) {
        kinds.add(kind.trim());
      }
    }
    return Collections.unmodifiableSet(kinds);
  }

  public TrackingLevel level() {
    return level;
  }

  public int interval() {
    return interval;
  }

  /** The report file to write at exit, or null. */
  public Path reportFile() {
    return reportFile;
  }

  /** Leaks accepted in this JVM: catalogue ids or kinds, as given. */
  public List<String> known() {
    return known;
  }

  /** Class name prefixes whose frames are never a handle's "created at" line. */
  public List<String> skip() {
    return skip;
  }

  /**
   * Whether handles of {@code kind} from {@code group} ({@code rocksdb}, {@code forst}, {@code
   * zip}) count.
   */
  public boolean tracks(String kind, String group) {
    if (exclude.contains(kind) || exclude.contains(group)) {
      return false;
    }
    return include.isEmpty() || include.contains(kind) || include.contains(group);
  }

  /** Whether any kind of {@code group} may be tracked; decides what to instrument. */
  public boolean tracksGroup(String group) {
    if (level == TrackingLevel.OFF || exclude.contains(group)) {
      return false;
    }
    if (include.isEmpty() || include.contains(group)) {
      return true;
    }
    for (String kind : include) {
      boolean zipKind = ZIP_KINDS.contains(kind) || kind.equals(ZIP_GROUP);
      boolean otherGroup = kind.equals(ROCKSDB_GROUP) || kind.equals(FORST_GROUP);
      if (!otherGroup && zipKind == group.equals(ZIP_GROUP)) {
        return true;
      }
    }
    return false;
  }

  @Override
  public String toString() {
    return "level="
        + level.word()
        + ",interval="
        + interval
        + (include.isEmpty() ? "" : ",include=" + String.join("+", include))
        + (exclude.isEmpty() ? "" : ",exclude=" + String.join("+", exclude))
        + (reportFile == null ? "" : ",report=" + reportFile)
        + (skip.isEmpty() ? "" : ",skip=" + String.join("+", skip))
        + (known.isEmpty() ? "" : ",known=" + String.join("+", known));
  }
}
