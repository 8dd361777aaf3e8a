package dev.nativemem.internal.handles;

import java.util.List;
import java.util.stream.Collectors;

/** Captures where a handle was created, as the text of its first frames outside nativemem. */
public final class CreationSites {
  static final int MAX_FRAMES = 24;
  private static final StackWalker WALKER = StackWalker.getInstance();

  private CreationSites() {}

  static String capture() {
    List<StackWalker.StackFrame> frames =
        WALKER.walk(
            s -> s.dropWhile(CreationSites::isOurs).limit(MAX_FRAMES).collect(Collectors.toList()));
    StringBuilder text = new StringBuilder();
    for (StackWalker.StackFrame frame : frames) {
      text.append("\tat ").append(frame.toStackTraceElement()).append('\n');
    }
    return text.toString();
  }

  private static boolean isOurs(StackWalker.StackFrame frame) {
    String name = frame.getClassName();
    return name.startsWith("dev.nativemem.internal.handles.")
        || name.startsWith("dev.nativemem.agent.")
        || name.equals("dev.nativemem.NativeHandles");
  }

  /**
   * The first frame of {@code stack} that is application code: not the JDK, RocksDB or nativemem.
   */
  public static String applicationFrame(String stack) {
    for (String line : stack.split("\n")) {
      String frame = line.trim();
      if (!frame.startsWith("at ")) {
        continue; // a note such as "creation stack not recorded"
      }
      frame = frame.substring(3);
      if (!isLibraryFrame(frame)) {
        return frame;
      }
    }
    return null;
  }

  private static boolean isLibraryFrame(String frame) {
    String body = frame.contains("/") ? frame.substring(frame.indexOf('/') + 1) : frame;
    return body.startsWith("java.")
        || body.startsWith("jdk.")
        || body.startsWith("sun.")
        || body.startsWith("org.rocksdb.");
  }
}
