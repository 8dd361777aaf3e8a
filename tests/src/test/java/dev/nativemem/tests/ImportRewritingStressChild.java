package dev.nativemem.tests;

import dev.nativemem.NativeMemory;
import dev.nativemem.profile.HeapProfiler;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadInfo;
import java.lang.reflect.Field;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.zip.DataFormatException;
import java.util.zip.Deflater;
import java.util.zip.Inflater;
import sun.misc.Unsafe;

/**
 * Runs in a forked JVM on plain glibc: the import-rewriting engine under stress. First, for {@code
 * seconds}: 16 allocating threads, each replaced by a new thread every few hundred steps, that
 * allocate, reallocate and free native memory through the JDK's own imports (Unsafe, zlib, direct
 * buffers) and a JNI library's (every hooked entry point, getline into a buffer glibc grows itself,
 * dlopen and dlclose of a library that allocates), while profiling is started and stopped every 100
 * ms. Then, profiling on: 16 threads hold a known number of bytes (dump "held.heap"), free them and
 * end (dump "freed.heap"), after a dump of the quiet process ("baseline.heap").
 *
 * <p>A watchdog prints every thread's stack and halts the JVM (exit 3) when no step completes for
 * 30 s: a deadlock shows as a failure with its stacks, not as a timeout.
 *
 * <p>Args: seconds, the JNI library, the library to dlopen, a text file to read, the dump
 * directory.
 */
public final class ImportRewritingStressChild {
  static final int THREADS = 16;
  static final long INTERVAL = 16 * 1024;

  /** Each holding thread's blocks: allocated at HOLD_FIRST bytes, then reallocated to HOLD_SIZE. */
  static final int HOLD_BLOCKS = 64;

  static final int HOLD_FIRST = 8 * 1024;
  static final int HOLD_SIZE = 32 * 1024;

  private static final Unsafe UNSAFE = unsafe();
  private static final AtomicLong STEPS = new AtomicLong();
  private static final AtomicLong THREADS_STARTED = new AtomicLong();
  private static final AtomicLong TOGGLES = new AtomicLong();
  private static final AtomicLong DLOPENS = new AtomicLong();
  private static final AtomicLong GETLINES = new AtomicLong();
  private static final AtomicLong FAILURES = new AtomicLong();

  private static String tinyLibrary;
  private static String linesFile;

  public static void main(String[] args) throws Exception {
    int seconds = Integer.parseInt(args[0]);
    System.load(args[1]);
    tinyLibrary = args[2];
    linesFile = args[3];
    Path dir = Paths.get(args[4]);
    HeapProfiler profiler = NativeMemory.profiling();
    profiler.resetWithSampleInterval(INTERVAL);
    System.out.println("JAVA_FRAMES " + profiler.javaFrames(true));
    profiler.start();
    watchdog();

    AtomicBoolean running = new AtomicBoolean(true);
    List<Thread> threads = new ArrayList<>();
    for (int slot = 0; slot < THREADS; slot++) {
      int id = slot;
      threads.add(
          new Thread(
              () -> {
                long seed = id;
                while (running.get()) {
                  long s = seed++;
                  Thread worker = new Thread(() -> work(s, running), "worker-" + id + "-" + s);
                  worker.start();
                  THREADS_STARTED.incrementAndGet();
                  join(worker);
                }
              },
              "slot-" + id));
    }
    threads.add(PeriodicStep.startingAndStopping(running, profiler, TOGGLES, FAILURES));
    threads.add(PeriodicStep.every(running, 2000, FAILURES, System::gc));
    for (Thread t : threads) {
      t.start();
    }
    Thread.sleep(TimeUnit.SECONDS.toMillis(seconds));
    running.set(false);
    for (Thread t : threads) {
      join(t);
    }
    System.out.println("STEPS " + STEPS.get());
    System.out.println("THREADS_STARTED " + THREADS_STARTED.get());
    System.out.println("TOGGLES " + TOGGLES.get());
    System.out.println("DLOPENS " + DLOPENS.get());
    System.out.println("GETLINES " + GETLINES.get());

    // Profiling on from here: the estimate of a quiet process, with 16 threads holding known
    // bytes, and once they freed them and ended.
    profiler.start();
    settle();
    dump(dir, "baseline");
    CountDownLatch held = new CountDownLatch(THREADS);
    CountDownLatch release = new CountDownLatch(1);
    List<Thread> holders = new ArrayList<>();
    for (int i = 0; i < THREADS; i++) {
      Thread t = new Thread(() -> hold(held, release), "holder-" + i);
      holders.add(t);
      t.start();
    }
    held.await();
    System.out.println("HELD_TRUTH " + (long) THREADS * HOLD_BLOCKS * HOLD_SIZE);
    dump(dir, "held");
    release.countDown();
    for (Thread t : holders) {
      join(t);
    }
    settle();
    dump(dir, "freed");
    profiler.stop();
    System.out.println("FAILURES " + FAILURES.get());
    System.out.println("DONE");
  }

  /** One thread's life: a few hundred steps of mixed native work, then everything it kept freed. */
  private static void work(long seed, AtomicBoolean running) {
    SplittableRandom random = new SplittableRandom(seed);
    List<Long> blocks = new ArrayList<>();
    List<Object> kept = new ArrayList<>();
    byte[] payload = new byte[4096];
    try {
      for (int step = 0; step < 300 && running.get(); step++) {
        switch (random.nextInt(10)) {
          case 0:
          case 1:
            long block = UNSAFE.allocateMemory(16 + random.nextInt(64 * 1024));
            if (random.nextBoolean()) {
              block = UNSAFE.reallocateMemory(block, 16 + random.nextInt(128 * 1024));
            }
            blocks.add(block);
            break;
          case 2:
            zlibRoundTrip(payload, random);
            break;
          case 3:
            kept.add(ByteBuffer.allocateDirect(1 + random.nextInt(64 * 1024)));
            break;
          case 4:
            if (StressNative.churn(4, 16 + random.nextInt(8192)) < 0) {
              throw new IllegalStateException("native churn failed");
            }
            break;
          case 5:
            if (StressNative.getlines(linesFile) <= 0) {
              throw new IllegalStateException("getline read nothing from " + linesFile);
            }
            GETLINES.incrementAndGet();
            break;
          case 6:
            if (random.nextInt(8) == 0) {
              long made = StressNative.dlopenChurn(tinyLibrary);
              if (made != 16) {
                throw new IllegalStateException("dlopen churn returned " + made);
              }
              DLOPENS.incrementAndGet();
            }
            break;
          case 7:
            kept.add(random.nextBoolean() ? new Deflater() : new Inflater());
            break;
          default:
            freeHalf(blocks, kept);
        }
        STEPS.incrementAndGet();
      }
    } catch (RuntimeException | DataFormatException e) {
      FAILURES.incrementAndGet();
      System.out.println("FAILURE " + Thread.currentThread().getName() + " " + e);
    } finally {
      for (long block : blocks) {
        UNSAFE.freeMemory(block);
      }
      blocks.clear();
      endAll(kept);
    }
  }

  private static void zlibRoundTrip(byte[] payload, SplittableRandom random)
      throws DataFormatException {
    for (int i = 0; i < payload.length; i += 64) {
      payload[i] = (byte) random.nextInt(4);
    }
    Deflater deflater = new Deflater(random.nextInt(10));
    byte[] compressed = new byte[payload.length * 2];
    deflater.setInput(payload);
    deflater.finish();
    int length = deflater.deflate(compressed);
    deflater.end();
    Inflater inflater = new Inflater();
    inflater.setInput(compressed, 0, length);
    byte[] back = new byte[payload.length];
    int n = inflater.inflate(back);
    inflater.end();
    if (n != payload.length) {
      throw new IllegalStateException("zlib gave back " + n + " of " + payload.length + " bytes");
    }
  }

  /** Frees the newer half of the blocks and ends the newer half of what was kept. */
  private static void freeHalf(List<Long> blocks, List<Object> kept) {
    List<Long> newer = blocks.subList(blocks.size() / 2, blocks.size());
    for (long block : newer) {
      UNSAFE.freeMemory(block);
    }
    newer.clear();
    endAll(kept.subList(kept.size() / 2, kept.size()));
  }

  /** Ends the zlib streams among {@code kept} and forgets everything in it (buffers to the GC). */
  private static void endAll(List<Object> kept) {
    for (Object o : kept) {
      if (o instanceof Deflater) {
        ((Deflater) o).end();
      } else if (o instanceof Inflater) {
        ((Inflater) o).end();
      }
    }
    kept.clear();
  }

  /** Holds HOLD_BLOCKS blocks of HOLD_SIZE until released, then frees them. */
  private static void hold(CountDownLatch held, CountDownLatch release) {
    long[] blocks = new long[HOLD_BLOCKS];
    for (int i = 0; i < HOLD_BLOCKS; i++) {
      blocks[i] = UNSAFE.reallocateMemory(UNSAFE.allocateMemory(HOLD_FIRST), HOLD_SIZE);
    }
    StressNative.getlines(linesFile);
    held.countDown();
    try {
      release.await();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    for (long block : blocks) {
      UNSAFE.freeMemory(block);
    }
  }

  private static void dump(Path dir, String name) {
    Path path = NativeMemory.dumpProfile(dir.resolve(name + ".heap")).path();
    STEPS.incrementAndGet();
    System.out.println("DUMP " + name + " " + path);
  }

  /** A GC, the JDK's cleaners' time to free the direct buffers and streams it found. */
  private static void settle() throws InterruptedException {
    for (int i = 0; i < 3; i++) {
      System.gc();
      Thread.sleep(300);
    }
  }

  private static void join(Thread t) {
    try {
      t.join();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /** Halts with every thread's stack when no step completed for 30 s while steps are expected. */
  private static void watchdog() {
    Thread dog =
        new Thread(
            () -> {
              long last = -1;
              long still = 0;
              while (true) {
                try {
                  Thread.sleep(1000);
                } catch (InterruptedException e) {
                  return;
                }
                long now = STEPS.get() + TOGGLES.get();
                still = now == last ? still + 1 : 0;
                last = now;
                if (still >= 30) {
                  System.out.println("STALL no step for 30 s; threads:");
                  for (ThreadInfo info :
                      ManagementFactory.getThreadMXBean().dumpAllThreads(true, true)) {
                    System.out.println(info.toString().replace('\n', '|'));
                    for (StackTraceElement e : info.getStackTrace()) {
                      System.out.println("STALL   at " + e);
                    }
                  }
                  System.out.flush();
                  Runtime.getRuntime().halt(3);
                }
              }
            },
            "watchdog");
    dog.setDaemon(true);
    dog.start();
  }

  private static Unsafe unsafe() {
    try {
      Field f = Unsafe.class.getDeclaredField("theUnsafe");
      f.setAccessible(true);
      return (Unsafe) f.get(null);
    } catch (ReflectiveOperationException e) {
      throw new IllegalStateException(e);
    }
  }
}
