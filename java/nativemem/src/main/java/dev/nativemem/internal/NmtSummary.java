package dev.nativemem.internal;

import dev.nativemem.NativeMemoryException;
import java.lang.management.ManagementFactory;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.management.JMException;
import javax.management.ObjectName;

/**
 * Native Memory Tracking's summary, read in-process through the DiagnosticCommand MBean ({@code
 * vmNativeMemory summary scale=b}, what {@code jcmd <pid> VM.native_memory} runs) without spawning
 * {@code jcmd}.
 */
public final class NmtSummary {
  private static final Pattern TOTAL = Pattern.compile("Total: reserved=(\\d+), committed=(\\d+)");
  private static final Pattern MALLOC = Pattern.compile("^\\s+malloc: (\\d+)", Pattern.MULTILINE);
  private static final Pattern MMAP =
      Pattern.compile("^\\s+mmap:\\s+reserved=(\\d+), committed=(\\d+)", Pattern.MULTILINE);
  private static final Pattern CATEGORY =
      Pattern.compile("^-\\s+(.+?) \\(reserved=(\\d+), committed=(\\d+)\\)", Pattern.MULTILINE);

  private static final ObjectName DIAGNOSTIC_COMMAND =
      objectName("com.sun.management:type=DiagnosticCommand");

  private final long reservedBytes;
  private final long committedBytes;
  private final Long mallocBytes;
  private final Long mmapCommittedBytes;
  private final Map<String, Long> committedByCategory;

  private NmtSummary(
      long reserved, long committed, Long malloc, Long mmap, Map<String, Long> categories) {
    this.reservedBytes = reserved;
    this.committedBytes = committed;
    this.mallocBytes = malloc;
    this.mmapCommittedBytes = mmap;
    this.committedByCategory = Collections.unmodifiableMap(categories);
  }

  /**
   * The summary of this JVM, or {@code null} when NMT is off or the JVM has no DiagnosticCommand
   * MBean (not HotSpot).
   */
  public static NmtSummary read() {
    if (!ManagementFactory.getPlatformMBeanServer().isRegistered(DIAGNOSTIC_COMMAND)) {
      return null;
    }
    return parse(run());
  }

  /** The DiagnosticCommand's raw text, as {@code jcmd} would print it. */
  public static String run() {
    try {
      Object text =
          ManagementFactory.getPlatformMBeanServer()
              .invoke(
                  DIAGNOSTIC_COMMAND,
                  "vmNativeMemory",
                  new Object[] {new String[] {"summary", "scale=b"}},
                  new String[] {String[].class.getName()});
      return String.valueOf(text);
    } catch (JMException e) {
      throw new NativeMemoryException(
          "cannot run the vmNativeMemory diagnostic command in this JVM: " + e.getMessage(), e);
    }
  }

  private static ObjectName objectName(String name) {
    try {
      return new ObjectName(name);
    } catch (JMException e) {
      throw new IllegalStateException(e);
    }
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
    Matcher category = CATEGORY.matcher(text);
    while (category.find()) {
      categories.put(category.group(1).trim(), Long.parseLong(category.group(3)));
    }
    return new NmtSummary(
        Long.parseLong(total.group(1)),
        Long.parseLong(total.group(2)),
        malloc.find() ? Long.parseLong(malloc.group(1)) : null,
        mmap.find() ? Long.parseLong(mmap.group(2)) : null,
        categories);
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
}
