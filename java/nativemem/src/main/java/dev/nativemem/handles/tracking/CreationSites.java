package dev.nativemem.handles.tracking;

import dev.nativemem.handles.catalogue.LeakCatalogue;
import dev.nativemem.handles.catalogue.LibraryOwners;
import java.security.CodeSource;
import java.util.Arrays;
import java.util.List;
import java.util.stream.Collectors;

/**
 * Captures where a handle was created: the text of its first frames outside nativemem, headed by
 * the first frame of application code ({@code created at ...}).
 *
 * <p>Which code is the application's is decided by where its class comes from, not by its package
 * alone: the JDK (boot and platform class loaders), RocksDB and ForSt (classes of {@code
 * org.rocksdb} or {@code org.forstdb} from the same jar as that package's {@code RocksObject}:
 * RocksDB's own tests, in that package but elsewhere, are application code), class loaders,
 * nested-jar handlers and the user's {@code skip} prefixes are not.
 */
public final class CreationSites {
  static final int MAX_FRAMES = 24;
  private static final String HEADLINE = "created at ";
  private static final StackWalker WALKER =
      StackWalker.getInstance(StackWalker.Option.RETAIN_CLASS_REFERENCE);

  /** Framework infrastructure that loads classes or reads jars on the application's behalf. */
  static final List<String> INFRASTRUCTURE =
      Arrays.asList(
          "org.springframework.boot.loader.",
          "org.apache.flink.util.ChildFirstClassLoader",
          "org.apache.flink.util.FlinkUserCodeClassLoader");

  private static final ClassValue<Boolean> LIBRARY =
      new ClassValue<Boolean>() {
        @Override
        protected Boolean computeValue(Class<?> type) {
          return isLibrary(type, HandleTracker.get().options().skip());
        }
      };

  private CreationSites() {}

  static String capture() {
    List<StackWalker.StackFrame> frames =
        WALKER.walk(
            s -> s.dropWhile(CreationSites::isOurs).limit(MAX_FRAMES).collect(Collectors.toList()));
    StringBuilder text = new StringBuilder();
    for (StackWalker.StackFrame frame : frames) {
      // the library version a known leak depends on
      LeakCatalogue.noteIfVersioned(frame.getDeclaringClass());
    }
    for (StackWalker.StackFrame frame : frames) {
      if (!LIBRARY.get(frame.getDeclaringClass())) {
        LibraryOwners.note(frame.getDeclaringClass()); // whose jar: read when a report is built
        text.append(HEADLINE).append(frame.toStackTraceElement()).append('\n');
        break;
      }
    }
    for (StackWalker.StackFrame frame : frames) {
      text.append("\tat ").append(frame.toStackTraceElement()).append('\n');
    }
    return text.toString();
  }

  private static boolean isOurs(StackWalker.StackFrame frame) {
    String name = frame.getClassName();
    return name.startsWith("dev.nativemem.handles.")
        || name.startsWith("dev.nativemem.agent.")
        || name.startsWith("dev.nativemem.boot."); // the JDK zip classes' bridge (BootHooks)
  }

  /** Whether frames of {@code type} are library or framework code rather than the application's. */
  static boolean isLibrary(Class<?> type, List<String> skip) {
    String name = type.getName();
    for (String prefix : skip) {
      if (name.startsWith(prefix)) {
        return true;
      }
    }
    for (String prefix : INFRASTRUCTURE) {
      if (name.startsWith(prefix)) {
        return true;
      }
    }
    ClassLoader loader = type.getClassLoader();
    if (loader == null || loader == ClassLoader.getPlatformClassLoader()) {
      return true; // the JDK (and the boot class path, where the agent puts nativemem)
    }
    if (ClassLoader.class.isAssignableFrom(type)) {
      return true;
    }
    RocksFamily family = RocksFamily.ofClass(name);
    return family != null && fromFamilyJar(type, loader, family);
  }

  /**
   * Whether {@code type} comes from the jar that holds its family's {@code RocksObject} (RocksDB's
   * or ForSt's).
   */
  private static boolean fromFamilyJar(Class<?> type, ClassLoader loader, RocksFamily family) {
    try {
      Class<?> base = Class.forName(family.className("RocksObject"), false, loader);
      String jar = location(base);
      return jar == null || jar.equals(location(type));
    } catch (ClassNotFoundException | LinkageError | RuntimeException e) {
      return true;
    }
  }

  private static String location(Class<?> type) {
    CodeSource source = type.getProtectionDomain().getCodeSource();
    return source == null || source.getLocation() == null ? null : source.getLocation().toString();
  }

  /**
   * The first frame of {@code stack} that is application code: the headline captured with it, or
   * for a stack without one, the first frame outside the JDK, RocksDB, ForSt and nativemem by name.
   */
  public static String applicationFrame(String stack) {
    if (stack.startsWith(HEADLINE)) {
      int end = stack.indexOf('\n');
      return stack.substring(HEADLINE.length(), end < 0 ? stack.length() : end);
    }
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

  /** {@code stack} without its headline: the frames (or the note) alone. */
  public static String frames(String stack) {
    if (stack.startsWith(HEADLINE)) {
      int end = stack.indexOf('\n');
      return end < 0 ? "" : stack.substring(end + 1);
    }
    return stack;
  }

  private static boolean isLibraryFrame(String frame) {
    String body = frame.contains("/") ? frame.substring(frame.indexOf('/') + 1) : frame;
    return body.startsWith("java.")
        || body.startsWith("jdk.")
        || body.startsWith("sun.")
        || RocksFamily.ofClass(body) != null;
  }
}
