package dev.nativemem.profile;

import dev.nativemem.internal.ByteFormat;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The native bytes a class's code left live between two heap profiles ({@link LiveBytesScope}), by
 * the class's lines. A sample counts when its Java frames pass through the class (or a class nested
 * in it) and the allocation is not the JVM's own: the innermost Java frame is a native method
 * (bytecode allocates nothing native by itself: below a bytecode frame the JVM resolves, loads or
 * interns), and the native code below it does not enter HotSpot: no {@code JVM_*} entry (the JDK's
 * native methods that define, find or load classes and libraries), none of HotSpot's own allocation
 * ({@code os::malloc}, {@code os::strdup}, {@code AllocateHeap}, arenas), no unnamed code of {@code
 * libjvm.so}; unless through {@code Unsafe.allocateMemory} (direct buffers), which is the
 * application's. nativemem's own records (native methods of its bridge, fed by the agent's hooks)
 * do not count either. Figures are unbiased estimates from samples.
 */
public final class LiveBytes {
  /** {@code pkg.Class.method(Place)}: how the analysis names a Java frame. */
  private static final Pattern JAVA_FRAME =
      Pattern.compile("([^\\s:;()]+)\\.[^\\s.:;()]+\\((.*)\\)");

  private static final String OWN_BRIDGE = "dev.nativemem.internal.NativeBridge.";

  /**
   * Names that start so are HotSpot's code (the last: libjvm's code without a symbol). The analysis
   * shows HotSpot's malloc wrappers ({@code os::malloc}, {@code AllocateHeap}) as allocator frames,
   * so the stack's leaf is then their caller: HotSpot's runtime, linking and table code are named
   * too.
   */
  private static final String[] JVM_CODE = {
    "JVM_",
    "os::",
    "AllocateHeap",
    "ReallocateHeap",
    "Arena::",
    "ChunkPool::",
    "libjvm.so+",
    "MHN_",
    "SharedRuntime::",
    "AdapterHandlerLibrary::",
    "BasicHashtable",
    "InterpreterRuntime::",
    "LinkResolver::",
    "SystemDictionary::",
    "ClassLoader::",
    "SymbolTable::",
    "StringTable::",
    "Method::",
    "ConstantPool::",
    "CompileBroker::",
    "Runtime1::"
  };

  /** Unsafe's allocation: its native methods (JDK 25 jumps from its entry to os::malloc). */
  private static final String[] APPLICATION_THROUGH_JVM = {
    "Unsafe_AllocateMemory0",
    "Unsafe_ReallocateMemory0",
    "jdk.internal.misc.Unsafe.allocateMemory0(",
    "jdk.internal.misc.Unsafe.reallocateMemory0("
  };

  /** Native and Java frames shown below a site's line, at most. */
  private static final int STACK_SHOWN = 24;

  /** Sites shown in a failure, at most. */
  private static final int SITES_SHOWN = 5;

  private final long bytes;
  private final long jvmBytes;
  private final long sampleIntervalBytes;
  private final List<Site> sites;

  private LiveBytes(long bytes, long jvmBytes, long sampleIntervalBytes, List<Site> sites) {
    this.bytes = bytes;
    this.jvmBytes = jvmBytes;
    this.sampleIntervalBytes = sampleIntervalBytes;
    this.sites = Collections.unmodifiableList(sites);
  }

  /**
   * Reads collapsed difference lines ({@code root;...;leaf <base bytes> <current bytes>}) and keeps
   * the growth of the stacks that count for {@code className}.
   */
  static LiveBytes of(String collapsedDifference, String className, long sampleIntervalBytes) {
    long counted = 0;
    long jvm = 0;
    Map<String, Site> byLine = new LinkedHashMap<>();
    for (String line : collapsedDifference.split("\n")) {
      int current = line.lastIndexOf(' ');
      int base = current < 0 ? -1 : line.lastIndexOf(' ', current - 1);
      if (base <= 0) {
        continue;
      }
      long growth;
      try {
        growth =
            Long.parseLong(line.substring(current + 1))
                - Long.parseLong(line.substring(base + 1, current));
      } catch (NumberFormatException e) {
        continue;
      }
      String[] frames = line.substring(0, base).split(";");
      int innermostJava = -1;
      int own = -1;
      for (int i = 0; i < frames.length; i++) {
        Matcher java = JAVA_FRAME.matcher(frames[i]);
        if (java.matches()) {
          innermostJava = i;
          if (isOwn(java.group(1), className)) {
            own = i;
          }
        }
      }
      if (own < 0) {
        continue;
      }
      if (isJvmAllocation(frames, innermostJava)) {
        jvm += growth;
        continue;
      }
      counted += growth;
      Site site = byLine.get(frames[own]);
      if (site == null) {
        site = new Site(frames[own]);
        byLine.put(frames[own], site);
      }
      site.add(growth, frames, own);
    }
    List<Site> sites = new ArrayList<>(byLine.values());
    sites.sort((a, b) -> Long.compare(b.bytes, a.bytes));
    return new LiveBytes(counted, jvm, sampleIntervalBytes, sites);
  }

  private static boolean isOwn(String frameClass, String className) {
    return frameClass.equals(className) || frameClass.startsWith(className + "$");
  }

  /**
   * Below a bytecode frame, into HotSpot (not through Unsafe's allocation), or nativemem's own
   * records.
   */
  private static boolean isJvmAllocation(String[] frames, int innermostJava) {
    String innermost = frames[innermostJava];
    if (!innermost.endsWith("(Native Method)") || innermost.startsWith(OWN_BRIDGE)) {
      return true;
    }
    boolean jvm = false;
    for (int i = innermostJava; i < frames.length; i++) {
      if (startsWithAny(frames[i], APPLICATION_THROUGH_JVM)) {
        return false;
      }
      jvm |= startsWithAny(frames[i], JVM_CODE);
    }
    return jvm;
  }

  private static boolean startsWithAny(String label, String[] prefixes) {
    for (String prefix : prefixes) {
      if (label.startsWith(prefix)) {
        return true;
      }
    }
    return false;
  }

  /** Estimated bytes left live by the class's code (growth; negative when it freed more). */
  public long bytes() {
    return bytes;
  }

  /**
   * Estimated growth under the class's frames that the JVM allocated for itself (class loading,
   * interning, resolution, libraries loaded) or nativemem for its records: not counted in {@link
   * #bytes()}.
   */
  public long jvmBytes() {
    return jvmBytes;
  }

  /** Mean bytes between two samples in the profiles compared. */
  public long sampleIntervalBytes() {
    return sampleIntervalBytes;
  }

  /** The class's lines that left bytes live, largest first. */
  public List<Site> sites() {
    return sites;
  }

  /**
   * The failure text when more than {@code maxBytes} were left live, else null: the total, then
   * each line with its bytes and its largest stack, leaf first.
   */
  public String failure(String scopeName, long maxBytes) {
    if (bytes <= maxBytes) {
      return null;
    }
    StringBuilder out = new StringBuilder();
    out.append("native memory left live by '")
        .append(scopeName)
        .append("': ")
        .append(ByteFormat.human(bytes))
        .append(" (")
        .append(bytes)
        .append(" bytes) over the limit of ")
        .append(ByteFormat.human(maxBytes))
        .append(", estimated from heap profile samples (one per ")
        .append(ByteFormat.human(sampleIntervalBytes))
        .append(" allocated) after a GC and the JDK's cleaners\n");
    int shown = 0;
    for (Site site : sites) {
      if (shown++ == SITES_SHOWN || site.bytes <= 0) {
        break;
      }
      out.append(
          String.format(
              Locale.ROOT,
              "  %s (%d bytes) allocated at %s%n",
              ByteFormat.human(site.bytes),
              site.bytes,
              site.line));
      for (String frame : site.stack) {
        out.append("      at ").append(frame).append('\n');
      }
    }
    return out.toString();
  }

  @Override
  public String toString() {
    return ByteFormat.human(bytes)
        + " left live in "
        + sites.size()
        + " lines ("
        + ByteFormat.human(jvmBytes)
        + " of the JVM's own not counted)";
  }

  /** One line of the class and the bytes its code left live. */
  public static final class Site {
    private final String line;
    private long bytes;
    private long largestStackBytes = Long.MIN_VALUE;
    private List<String> stack = List.of();

    private Site(String line) {
      this.line = line;
    }

    private void add(long growth, String[] frames, int own) {
      bytes += growth;
      if (growth > largestStackBytes) {
        largestStackBytes = growth;
        List<String> leafFirst = new ArrayList<>();
        for (int i = frames.length - 1; i >= own && leafFirst.size() < STACK_SHOWN; i--) {
          leafFirst.add(frames[i]);
        }
        stack = Collections.unmodifiableList(leafFirst);
      }
    }

    /** The class's frame, as the JVM names it: {@code com.example.T.leak(T.java:42)}. */
    public String line() {
      return line;
    }

    /** Estimated bytes its code left live. */
    public long bytes() {
      return bytes;
    }

    /** The stack of its largest sample group, leaf (the allocating function) first. */
    public List<String> stack() {
      return stack;
    }

    @Override
    public String toString() {
      return ByteFormat.human(bytes) + " at " + line;
    }
  }
}
