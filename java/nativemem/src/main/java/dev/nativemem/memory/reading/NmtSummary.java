package dev.nativemem.memory.reading;

import dev.nativemem.base.NativeMemoryException;
import dev.nativemem.internal.DiagnosticCommands;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Native Memory Tracking's summary, read in-process ({@code VM.native_memory summary scale=b}
 * through {@code internal.DiagnosticCommands}, what {@code jcmd <pid> VM.native_memory} runs)
 * without spawning {@code jcmd}.
 */
public final class NmtSummary {
  private static final Pattern TOTAL = Pattern.compile("Total: reserved=(\\d+), committed=(\\d+)");
  private static final Pattern MALLOC = Pattern.compile("^\\s+malloc: (\\d+)", Pattern.MULTILINE);
  private static final Pattern MMAP =
      Pattern.compile("^\\s+mmap:\\s+reserved=(\\d+), committed=(\\d+)", Pattern.MULTILINE);
  private static final Pattern CATEGORY =
      Pattern.compile("^-\\s+(.+?) \\(reserved=(\\d+), committed=(\\d+)\\)", Pattern.MULTILINE);

  /** A category's own {@code (mmap: reserved=…, committed=…)} line, within its block. */
  private static final Pattern CATEGORY_MMAP =
      Pattern.compile("^\\s+\\(mmap: reserved=\\d+, committed=(\\d+)[,)]", Pattern.MULTILINE);

  private final long reservedBytes;
  private final long committedBytes;
  private final Long mallocBytes;
  private final Long mmapCommittedBytes;
  private final Map<String, Long> committedByCategory;
  private final Map<String, Long> mmapCommittedByCategory;

  private NmtSummary(
      long reserved,
      long committed,
      Long malloc,
      Long mmap,
      Map<String, Long> categories,
      Map<String, Long> mmapCategories) {
    this.reservedBytes = reserved;
    this.committedBytes = committed;
    this.mallocBytes = malloc;
    this.mmapCommittedBytes = mmap;
    this.committedByCategory = Collections.unmodifiableMap(categories);
    this.mmapCommittedByCategory = Collections.unmodifiableMap(mmapCategories);
  }

  /**
   * Set once NMT answered that it is not enabled: it is chosen at the JVM's start and can only be
   * shut down later, never started, so that answer holds for the JVM's life and the command is not
   * run again (it cost a scrape of the metrics about 0.2 ms).
   */
  private static volatile boolean off;

  /**
   * The summary of this JVM, or {@code null} when NMT is off or the JVM cannot run diagnostic
   * commands (not HotSpot).
   */
  public static NmtSummary read() {
    if (off || !DiagnosticCommands.available()) {
      return null;
    }
    NmtSummary summary = parse(run());
    off = summary == null;
    return summary;
  }

  /**
   * Why {@link #read} has no summary: this JVM cannot run diagnostic commands (and why), or NMT is
   * off; for a JVM whose summary {@link #read} answers it only names the flag.
   */
  public static String absence() {
    String why = DiagnosticCommands.absence();
    if (why != null) {
      return "cannot read Native Memory Tracking: " + why;
    }
    return "Native Memory Tracking is off (start the JVM with -XX:NativeMemoryTracking=summary)";
  }

  /** The command's raw text, as {@code jcmd} would print it. */
  public static String run() {
    return DiagnosticCommands.run("VM.native_memory", "summary", "scale=b");
  }

  /** Parses the summary text; {@code null} when it says NMT is not enabled. */
  public static NmtSummary parse(String text) {
    Matcher total = TOTAL.matcher(text);
    if (!total.find()) {
      if (text.contains("not enabled")) {
        return null;
      }
      throw new NativeMemoryException(
          "unrecognized Native Memory Tracking summary (run with scale=b): " + text);
    }
    Matcher malloc = MALLOC.matcher(text);
    Matcher mmap = MMAP.matcher(text);
    Map<String, Long> categories = new LinkedHashMap<>();
    Map<String, Long> mmapCategories = new LinkedHashMap<>();
    Matcher category = CATEGORY.matcher(text);
    String name = null;
    int blockStart = 0;
    while (true) {
      boolean found = category.find();
      if (name != null) {
        // The previous category's block runs to this header (or the end).
        Matcher mmapLine =
            CATEGORY_MMAP
                .matcher(text)
                .region(blockStart, found ? category.start() : text.length());
        if (mmapLine.find()) {
          mmapCategories.put(name, Long.parseLong(mmapLine.group(1)));
        }
      }
      if (!found) {
        break;
      }
      name = category.group(1).trim();
      blockStart = category.end();
      categories.put(name, Long.parseLong(category.group(3)));
    }
    return new NmtSummary(
        Long.parseLong(total.group(1)),
        Long.parseLong(total.group(2)),
        malloc.find() ? Long.parseLong(malloc.group(1)) : null,
        mmap.find() ? Long.parseLong(mmap.group(2)) : null,
        categories,
        mmapCategories);
  }

  public long reservedBytes() {
    return reservedBytes;
  }

  public long committedBytes() {
    return committedBytes;
  }

  /** The JVM's own {@code malloc} total, or {@code null} on JDKs that do not print it. */
  public Long mallocBytes() {
    return mallocBytes;
  }

  /** Committed memory the JVM mapped itself (heap, metaspace, code, stacks, GC), or null. */
  public Long mmapCommittedBytes() {
    return mmapCommittedBytes;
  }

  /** Committed bytes per NMT category ("Java Heap", "Class", "Thread", ...). */
  public Map<String, Long> committedByCategory() {
    return committedByCategory;
  }

  /**
   * Committed bytes the JVM mapped itself per category ("Java Heap", "GC", "Code", ...: the
   * category's {@code mmap:} line); categories without one are absent.
   */
  public Map<String, Long> mmapCommittedByCategory() {
    return mmapCommittedByCategory;
  }
}
