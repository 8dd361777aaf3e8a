package dev.nativemem.tests;

import dev.nativemem.NativeMemory;
import dev.nativemem.junit.NativeLeakCheck;
import dev.nativemem.junit.NativeLeakSettings;
import java.io.StringReader;
import java.lang.reflect.Proxy;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.function.Function;
import java.util.function.IntSupplier;
import java.util.function.Supplier;
import java.util.zip.Deflater;
import javax.xml.parsers.DocumentBuilderFactory;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.xml.sax.InputSource;

/**
 * Test classes run by {@link LeakedBytesRunner} through the JUnit test kit in a child JVM under a
 * profiling allocator, never directly.
 */
final class LeakedBytesFixtures {
  static final int DEFLATERS = 2_000;

  private LeakedBytesFixtures() {}

  /** Keeps 2,000 Deflaters (each used once) reachable after the class: a leak of native bytes. */
  @ExtendWith(NativeLeakCheck.class)
  static class LeaksDeflaters {
    static final List<Deflater> KEPT = new ArrayList<>();
    static volatile int line;
    static volatile long truthBytes;

    @Test
    void leaks() {
      new Deflater().end(); // the first one's class loading and library loading, left aside
      long before = threadLiveBytes();
      for (int i = 0; i < DEFLATERS; i++) {
        Object[] made = {new Deflater(), new Throwable()};
        line = ((Throwable) made[1]).getStackTrace()[0].getLineNumber();
        KEPT.add(usedOnce((Deflater) made[0]));
      }
      truthBytes = threadLiveBytes() - before;
    }
  }

  /** The same Deflaters, each ended, and the JVM's churn beside them: nothing may be left. */
  @ExtendWith(NativeLeakCheck.class)
  @NativeLeakSettings(maxLeakedBytes = 0)
  static class EndsDeflaters {
    @Test
    void ends() throws Exception {
      for (int i = 0; i < DEFLATERS; i++) {
        usedOnce(new Deflater()).end();
      }
      JvmChurn.churn();
    }
  }

  /**
   * Only makes the JVM work for itself under the class's frames: class loading (an XML parser's
   * classes, proxies), lambdas, string interning, JIT compilation. Not one byte may count.
   */
  @ExtendWith(NativeLeakCheck.class)
  @NativeLeakSettings(maxLeakedBytes = 0)
  static class JvmChurn {
    static final List<Object> KEPT = new ArrayList<>();

    @Test
    void churns() throws Exception {
      churn();
    }

    static void churn() throws Exception {
      KEPT.add(
          DocumentBuilderFactory.newInstance()
              .newDocumentBuilder()
              .parse(new InputSource(new StringReader("<a><b c='d'>text</b></a>"))));
      for (Class<?> type :
          List.of(Runnable.class, Callable.class, Comparable.class, AutoCloseable.class)) {
        KEPT.add(
            Proxy.newProxyInstance(
                JvmChurn.class.getClassLoader(), new Class<?>[] {type}, (p, m, a) -> null));
      }
      int base = KEPT.size();
      KEPT.add((Supplier<String>) () -> "one" + base);
      KEPT.add((IntSupplier) () -> base + 2);
      KEPT.add((Function<String, Integer>) String::length);
      KEPT.add((Function<Integer, String>) Integer::toHexString);
      KEPT.add((Callable<Object>) ArrayList::new);
      for (String name :
          List.of(
              "java.util.concurrent.ConcurrentSkipListMap",
              "java.time.chrono.JapaneseDate",
              "java.util.logging.LogManager",
              "java.text.DecimalFormat",
              "java.util.regex.Pattern")) {
        KEPT.add(Class.forName(name));
      }
      long sum = 0;
      for (int i = 0; i < 200_000; i++) {
        sum += hot(i);
      }
      KEPT.add(sum);
    }

    private static long hot(int i) {
      return Integer.toString(i).hashCode() * 31L + i;
    }
  }

  /**
   * Drops its Deflaters unended: the JDK's cleaner ends them after a GC, so no byte is left (the
   * agent, when present, reports them as leaked handles).
   */
  @ExtendWith(NativeLeakCheck.class)
  @NativeLeakSettings(maxLeakedBytes = 0)
  static class DropsDeflaters {
    @Test
    void drops() {
      for (int i = 0; i < DEFLATERS; i++) {
        usedOnce(new Deflater());
      }
    }
  }

  /** Checked per method: only the method that keeps its Deflaters fails. */
  @ExtendWith(NativeLeakCheck.class)
  @NativeLeakSettings(perMethod = true)
  static class PerMethod {
    static final List<Deflater> KEPT = new ArrayList<>();

    @Test
    void keeps() {
      for (int i = 0; i < DEFLATERS / 10; i++) {
        KEPT.add(usedOnce(new Deflater()));
      }
    }

    @Test
    void ends() {
      for (int i = 0; i < DEFLATERS / 10; i++) {
        usedOnce(new Deflater()).end();
      }
    }
  }

  static Deflater usedOnce(Deflater deflater) {
    deflater.setInput(new byte[64]);
    deflater.finish();
    deflater.deflate(new byte[128]);
    return deflater;
  }

  /**
   * Native bytes this thread allocated and did not free (jemalloc's own counters); 0 without
   * jemalloc.
   */
  static long threadLiveBytes() {
    try {
      return NativeMemory.mallctl("thread.allocated") - NativeMemory.mallctl("thread.deallocated");
    } catch (RuntimeException e) {
      return 0;
    }
  }
}
