import dev.nativemem.profile.HeapProfiler;
import dev.nativemem.NativeMemory;
import java.lang.reflect.Method;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import java.util.zip.Inflater;

/**
 * Java frames under stress, for crashes: sampling every 4 KiB, threads starting and stopping while
 * they allocate, GC, deoptimization (a call site made megamorphic after compilation), classes
 * loaded, sampled and unloaded (their method ids go stale before the next dump names them), Java
 * frames turned off and on, and dumps taken meanwhile. {@code JavaFramesStress <seconds> <dir>}.
 */
public final class JavaFramesStress {
  private static final List<Inflater> KEPT = new ArrayList<>();

  public static void main(String[] args) throws Exception {
    long end = System.currentTimeMillis() + Long.parseLong(args[0]) * 1000;
    Path dir = Paths.get(args[1]);
    HeapProfiler profiler = NativeMemory.profiling();
    profiler.resetWithSampleInterval(4096);
    profiler.javaFrames(true);
    profiler.start();
    URL classes = JavaFramesStress.class.getProtectionDomain().getCodeSource().getLocation();
    int rounds = 0;
    int dumps = 0;
    long nextDump = System.currentTimeMillis() + 10_000;
    while (System.currentTimeMillis() < end) {
      List<Thread> threads = new ArrayList<>();
      for (int t = 0; t < 6; t++) {
        Thread thread = new Thread(() -> churn(2_000), "churn-" + t);
        thread.start();
        threads.add(thread);
      }
      try (URLClassLoader loader =
          new URLClassLoader(new URL[] {classes}, ClassLoader.getPlatformClassLoader())) {
        Method plant = loader.loadClass(Planter.class.getName()).getDeclaredMethod("plant");
        plant.invoke(null);
      }
      deoptimize(rounds);
      if (rounds % 5 == 4) {
        profiler.javaFrames(false);
        profiler.javaFrames(true);
      }
      System.gc();
      if (System.currentTimeMillis() > nextDump) {
        NativeMemory.dumpProfile(dir.resolve("stress-" + dumps++ + ".heap"));
        nextDump += 10_000;
      }
      for (Thread thread : threads) {
        thread.join();
      }
      rounds++;
    }
    NativeMemory.dumpProfile(dir.resolve("stress-" + dumps++ + ".heap"));
    System.out.println("ROUNDS " + rounds);
    System.out.println("DUMPS " + dumps);
  }

  private static void churn(int count) {
    for (int i = 0; i < count; i++) {
      Inflater inflater = new Inflater();
      if (ThreadLocalRandom.current().nextInt(16) == 0) {
        synchronized (KEPT) {
          if (KEPT.size() < 5_000) {
            KEPT.add(inflater);
            continue;
          }
        }
      }
      inflater.end();
    }
  }

  /** Loaded by a throw-away class loader each round, so its class is unloaded by a later GC. */
  public static final class Planter {
    public static void plant() {
      for (int i = 0; i < 500; i++) {
        new Inflater().end();
      }
    }
  }

  private interface Shape {
    Inflater make();
  }

  /** Compiled for one receiver type, then called with others: an uncommon trap deoptimizes. */
  private static void deoptimize(int round) {
    Shape[] shapes = {Inflater::new, () -> new Inflater(true), () -> new Inflater(false)};
    for (int i = 0; i < 20_000; i++) {
      Shape shape = i < 19_000 ? shapes[0] : shapes[(i + round) % shapes.length];
      shape.make().end();
    }
  }
}
