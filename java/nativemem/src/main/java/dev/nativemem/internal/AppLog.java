package dev.nativemem.internal;

import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.WeakHashMap;
import java.util.concurrent.ConcurrentHashMap;

/**
 * nativemem's log: through the application's own SLF4J when it has one bound to a backend (log4j 2
 * or Logback, as Flink, Spring Boot and Kafka have), so that nativemem's lines reach the file the
 * framework writes and its log shippers collect; else through {@link System.Logger} ({@code
 * java.util.logging}, standard error). SLF4J is found at run time by reflection, first on the
 * system class loader (the agent's, where Flink's {@code lib/} is), then on the calling thread's
 * context class loader, then on the main thread's and the other live threads' context class
 * loaders: a Spring Boot executable jar's SLF4J is in {@code BOOT-INF/lib}, seen only by the
 * launcher's class loader, which the launcher makes the main thread's context class loader after
 * the agent started. Until SLF4J is found, each line looks again through loaders not yet tried
 * (each is tried once), so lines logged once the application's loader exists go through it.
 * nativemem itself depends on no logging library. Logger names are {@code dev.nativemem} and below
 * ({@code dev.nativemem.watch}, {@code dev.nativemem.incident}).
 */
public final class AppLog {
  /** What SLF4J offers, once found; null before, and after it failed a call. */
  private static volatile Slf4j slf4j;

  /** SLF4J failed a call: java.util.logging takes every line from then on. */
  private static volatile boolean failed;

  /** The class loaders SLF4J was looked for in (weakly held: a loader may be discarded). */
  private static final Map<ClassLoader, Boolean> TRIED = new WeakHashMap<>();

  private static final Map<String, Object> LOGGERS = new ConcurrentHashMap<>();

  private final String name;

  private AppLog(String name) {
    this.name = name;
  }

  /** The log named {@code name} ({@code dev.nativemem...}). */
  public static AppLog get(String name) {
    return new AppLog(name);
  }

  /** Logs {@code message} at {@code level}; never throws. */
  public void log(System.Logger.Level level, String message) {
    Slf4j s = slf4j();
    if (s != null) {
      try {
        Object logger = LOGGERS.computeIfAbsent(name, s::logger);
        Method m = s.method(level);
        if (m != null) {
          m.invoke(logger, message);
        }
        return;
      } catch (ReflectiveOperationException | RuntimeException | LinkageError e) {
        // SLF4J failed us: java.util.logging takes this line, and the next ones.
        failed = true;
        slf4j = null;
      }
    }
    System.getLogger(name).log(level, message);
  }

  /** Whether the application's SLF4J carries nativemem's lines in this JVM. */
  public static boolean throughSlf4j() {
    return slf4j() != null;
  }

  private static Slf4j slf4j() {
    Slf4j found = slf4j;
    if (found != null || failed) {
      return found;
    }
    synchronized (AppLog.class) {
      if (slf4j == null && !failed) {
        for (ClassLoader loader : candidates()) {
          if (loader != null && TRIED.put(loader, Boolean.TRUE) == null) {
            slf4j = Slf4j.find(loader);
            if (slf4j != null) {
              break;
            }
          }
        }
      }
      return failed ? null : slf4j;
    }
  }

  /**
   * The class loaders that may see the application's SLF4J, the likeliest first: the system class
   * loader, the calling thread's context class loader, the main thread's, the other live threads'.
   */
  private static List<ClassLoader> candidates() {
    List<ClassLoader> loaders = new ArrayList<>();
    loaders.add(ClassLoader.getSystemClassLoader());
    loaders.add(Thread.currentThread().getContextClassLoader());
    ThreadGroup root = Thread.currentThread().getThreadGroup();
    while (root != null && root.getParent() != null) {
      root = root.getParent();
    }
    if (root == null) {
      return loaders; // the calling thread has ended
    }
    Thread[] threads = new Thread[root.activeCount() + 16];
    int count = root.enumerate(threads, true);
    for (int i = 0; i < count; i++) {
      if ("main".equals(threads[i].getName())) {
        loaders.add(threads[i].getContextClassLoader());
      }
    }
    for (int i = 0; i < count; i++) {
      loaders.add(threads[i].getContextClassLoader());
    }
    return loaders;
  }

  /** SLF4J's {@code LoggerFactory.getLogger} and the {@code Logger} methods, by reflection. */
  private static final class Slf4j {
    private final Method getLogger;
    private final Method error;
    private final Method warn;
    private final Method info;
    private final Method debug;
    private final Method trace;

    private Slf4j(Class<?> factory, Class<?> logger) throws NoSuchMethodException {
      getLogger = factory.getMethod("getLogger", String.class);
      error = logger.getMethod("error", String.class);
      warn = logger.getMethod("warn", String.class);
      info = logger.getMethod("info", String.class);
      debug = logger.getMethod("debug", String.class);
      trace = logger.getMethod("trace", String.class);
    }

    /** SLF4J as {@code loader} sees it, bound to a backend; else null. */
    static Slf4j find(ClassLoader loader) {
      if (loader == null) {
        return null;
      }
      try {
        Class<?> factory = Class.forName("org.slf4j.LoggerFactory", true, loader);
        Object bound = factory.getMethod("getILoggerFactory").invoke(null);
        String binding = bound == null ? "" : bound.getClass().getName();
        if (binding.isEmpty() || binding.toLowerCase(Locale.ROOT).contains("nop")) {
          return null; // SLF4J without a backend drops every line
        }
        return new Slf4j(factory, Class.forName("org.slf4j.Logger", false, loader));
      } catch (ReflectiveOperationException | RuntimeException | LinkageError e) {
        return null;
      }
    }

    Object logger(String name) {
      try {
        return getLogger.invoke(null, name);
      } catch (ReflectiveOperationException e) {
        throw new IllegalStateException("SLF4J gave no logger for " + name, e);
      }
    }

    Method method(System.Logger.Level level) {
      switch (level) {
        case ERROR:
          return error;
        case WARNING:
          return warn;
        case INFO:
          return info;
        case DEBUG:
          return debug;
        case TRACE:
          return trace;
        default:
          return null;
      }
    }
  }
}
