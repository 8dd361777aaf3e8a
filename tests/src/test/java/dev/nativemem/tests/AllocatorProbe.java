package dev.nativemem.tests;

import dev.nativemem.NativeMemory;
import dev.nativemem.base.NativeMemoryException;
import dev.nativemem.internal.Json;
import java.lang.management.BufferPoolMXBean;
import java.lang.management.ManagementFactory;
import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

/**
 * Runs inside a child JVM: moves native memory by a known amount and prints what nativemem reported
 * around it, as one JSON object. The known amount is proved independently by the JDK's direct
 * buffer pool and by RSS.
 */
public final class AllocatorProbe {
  static final int CHUNK = 1 << 20;

  public static void main(String[] args) throws Exception {
    Map<String, Object> out = new LinkedHashMap<>();
    switch (args[0]) {
      case "allocate":
        allocate(Integer.parseInt(args[1]), out);
        break;
      case "free-then-purge":
        freeThenPurge(Integer.parseInt(args[1]), out);
        break;
      case "views":
        views(args.length > 1 ? Integer.parseInt(args[1]) : 0, out);
        break;
      case "stacks":
        stacks(Integer.parseInt(args[1]), Integer.parseInt(args[2]), out);
        break;
      case "jmx":
        jmx(out);
        break;
      case "resident":
        resident(out);
        break;
      case "bad-input":
        badInput(out);
        break;
      case "concurrent":
        concurrent(Integer.parseInt(args[1]), out);
        break;
      default:
        throw new IllegalArgumentException(args[0]);
    }
    System.out.println(dev.nativemem.internal.Json.write(out));
  }

  /** Keeps {@code mib} direct buffers of 1 MiB alive and reports before and after. */
  static void allocate(int mib, Map<String, Object> out) throws Exception {
    NativeMemory.stats(); // load the library and settle lazy allocations first
    NativeMemory.breakdown();
    out.put("stats_before", NativeMemory.stats().toJson());
    out.put("breakdown_before", NativeMemory.breakdown().toJson());
    long directBefore = directPoolBytes();
    List<ByteBuffer> held = allocateDirect(mib);
    out.put("direct_pool_delta_bytes", directPoolBytes() - directBefore);
    out.put("stats_after", NativeMemory.stats().toJson());
    out.put("breakdown_after", NativeMemory.breakdown().toJson());
    out.put("rss_after_bytes", NativeMemory.processMemory().rssBytes());
    out.put("held", held.size());
  }

  /** Frees {@code mib} MiB, reports dirty pages, purges, reports again. */
  static void freeThenPurge(int mib, Map<String, Object> out) throws Exception {
    NativeMemory.stats();
    List<ByteBuffer> held = allocateDirect(mib);
    for (ByteBuffer buffer : held) {
      free(buffer);
    }
    out.put("stats_freed", NativeMemory.stats().toJson());
    out.put("purge", NativeMemory.purge().toJson());
    out.put("stats_purged", NativeMemory.stats().toJson());
  }

  /** Optionally frees {@code freedMib} MiB first; then every view and the advice. */
  static void views(int freedMib, Map<String, Object> out) throws Exception {
    for (ByteBuffer buffer : allocateDirect(freedMib)) {
      free(buffer);
    }
    out.put("available_processors", Runtime.getRuntime().availableProcessors());
    out.put("allocator", NativeMemory.allocator().toJson());
    out.put("stats", NativeMemory.stats().toJson());
    out.put("breakdown", NativeMemory.breakdown().toJson());
    List<Object> advice = new ArrayList<>();
    for (dev.nativemem.base.Advice a : NativeMemory.advice()) {
      advice.add(a.toJson());
    }
    out.put("advice", advice);
  }

  /**
   * Touches thread stacks: memory that neither the allocator nor the JVM's pools own (NMT does:
   * "Thread" stacks). {@code threads} threads recurse {@code depth} frames and wait.
   */
  static void stacks(int threads, int depth, Map<String, Object> out) throws Exception {
    NativeMemory.breakdown();
    out.put("breakdown_before", NativeMemory.breakdown().toJson());
    java.util.concurrent.CountDownLatch deep = new java.util.concurrent.CountDownLatch(threads);
    java.util.concurrent.CountDownLatch release = new java.util.concurrent.CountDownLatch(1);
    List<Thread> started = new ArrayList<>();
    for (int t = 0; t < threads; t++) {
      Thread thread = new Thread(() -> recurse(depth, deep, release));
      thread.start();
      started.add(thread);
    }
    deep.await();
    out.put("breakdown_after", NativeMemory.breakdown().toJson());
    release.countDown();
    for (Thread thread : started) {
      thread.join();
    }
  }

  static long recurse(
      int depth,
      java.util.concurrent.CountDownLatch deep,
      java.util.concurrent.CountDownLatch release) {
    long a = depth, b = depth * 3L, c = depth * 7L, d = depth * 11L;
    if (depth == 0) {
      deep.countDown();
      try {
        release.await();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      return a;
    }
    return recurse(depth - 1, deep, release) + a + b + c + d;
  }

  /**
   * The resident breakdown between two reads of {@code /proc/self/smaps} by this probe: the Java
   * heap's resident and committed bytes as the kernel lists them inside the heap's ranges.
   */
  static void resident(Map<String, Object> out) throws Exception {
    NativeMemory.breakdown(); // load the library, read the ranges once
    String committedView =
        NativeMemory.breakdown(dev.nativemem.memory.MemoryBreakdown.View.COMMITTED).toJson();
    List<long[]> before = smaps();
    long started = System.nanoTime();
    dev.nativemem.memory.MemoryBreakdown resident = NativeMemory.breakdown();
    out.put("breakdown_micros", (System.nanoTime() - started) / 1000);
    List<long[]> after = smaps();
    out.put("breakdown", resident.toJson());
    out.put("committed_breakdown", committedView);
    out.put("heap_committed_bytes", resident.heapCommittedBytes());
    List<long[]> ranges = new ArrayList<>();
    Map<String, Object> jvm = cast(Json.parseObject(resident.toJson()).get("jvm"));
    for (Object range : (List<?>) jvm.get("heap_ranges")) {
      List<?> pair = (List<?>) range;
      ranges.add(
          new long[] {
            Long.parseUnsignedLong(((String) pair.get(0)).substring(2), 16),
            Long.parseUnsignedLong(((String) pair.get(1)).substring(2), 16)
          });
    }
    out.put("smaps_heap_rss_before", inRanges(before, ranges, RSS));
    out.put("smaps_heap_rss_after", inRanges(after, ranges, RSS));
    out.put("smaps_heap_writable_size", inRanges(after, ranges, WRITABLE_SIZE));
    javax.management.ObjectName name = NativeMemory.registerMBean();
    out.put(
        "jmx_unaccounted_bytes",
        ManagementFactory.getPlatformMBeanServer().getAttribute(name, "UnaccountedBytes"));
  }

  @SuppressWarnings("unchecked")
  static Map<String, Object> cast(Object o) {
    return (Map<String, Object>) o;
  }

  static final int WRITABLE_SIZE = 2;
  static final int RSS = 3;

  /** Each mapping of /proc/self/smaps as {start, end, Size if writable else 0, Rss}, bytes. */
  static List<long[]> smaps() throws java.io.IOException {
    List<long[]> mappings = new ArrayList<>();
    long[] current = null;
    boolean writable = false;
    for (String line :
        java.nio.file.Files.readAllLines(java.nio.file.Paths.get("/proc/self/smaps"))) {
      java.util.regex.Matcher header =
          java.util.regex.Pattern.compile("^([0-9a-f]+)-([0-9a-f]+) (\\S+) ").matcher(line);
      if (header.find()) {
        current =
            new long[] {
              Long.parseUnsignedLong(header.group(1), 16),
              Long.parseUnsignedLong(header.group(2), 16),
              0,
              0
            };
        writable = header.group(3).charAt(1) == 'w';
        mappings.add(current);
      } else if (current != null && line.startsWith("Size:") && writable) {
        current[2] = kib(line);
      } else if (current != null && line.startsWith("Rss:")) {
        current[3] = kib(line);
      }
    }
    return mappings;
  }

  private static long kib(String line) {
    return Long.parseLong(line.replaceAll("[^0-9]", "")) * 1024;
  }

  /** The sum of one column over the mappings wholly inside any of the ranges. */
  static long inRanges(List<long[]> mappings, List<long[]> ranges, int column) {
    long sum = 0;
    for (long[] m : mappings) {
      for (long[] r : ranges) {
        if (Long.compareUnsigned(m[0], r[0]) >= 0 && Long.compareUnsigned(m[1], r[1]) <= 0) {
          sum += m[column];
          break;
        }
      }
    }
    return sum;
  }

  /** Reads the MXBean registered by -Dnativemem.jmx=true next to the facade's own figures. */
  static void jmx(Map<String, Object> out) throws Exception {
    javax.management.MBeanServer server = ManagementFactory.getPlatformMBeanServer();
    javax.management.ObjectName name =
        new javax.management.ObjectName(dev.nativemem.NativeMemoryMXBean.OBJECT_NAME);
    out.put("registered_before_use", server.isRegistered(name));
    NativeMemory.version(); // first use of the facade
    out.put("registered", server.isRegistered(name));
    server.getAttribute(name, "AllocatorKind"); // JMX's own first-use costs, before any reading
    // Attributes come from a snapshot shared for MAX_AGE: let it expire, then read the facade's
    // figures just before the MXBean takes its fresh one.
    Thread.sleep(dev.nativemem.memory.MemorySnapshot.MAX_AGE.toMillis() + 50);
    out.put("stats_allocated_bytes", NativeMemory.stats().allocatedBytes());
    out.put("rss_bytes", NativeMemory.processMemory().rssBytes());
    out.put("kind", server.getAttribute(name, "AllocatorKind"));
    out.put("jmx_allocated_bytes", server.getAttribute(name, "AllocatedBytes"));
    out.put("jmx_resident_bytes", server.getAttribute(name, "AllocatorResidentBytes"));
    out.put("jmx_rss_bytes", server.getAttribute(name, "RssBytes"));
    out.put("breakdown", server.getAttribute(name, "BreakdownJson"));
    // One scrape: attributes read back to back come from one snapshot, so they agree exactly.
    String scraped = (String) server.getAttribute(name, "BreakdownJson");
    out.put("scrape_rss_bytes", server.getAttribute(name, "RssBytes"));
    out.put("scrape_unaccounted_bytes", server.getAttribute(name, "UnaccountedBytes"));
    out.put("scrape_breakdown", scraped);
    out.put("purge", server.invoke(name, "purge", new Object[0], new String[0]));
  }

  static void badInput(Map<String, Object> out) {
    out.put("decay_too_low", failure(() -> NativeMemory.setDecay(-2, 0)));
    out.put("decay_too_high", failure(() -> NativeMemory.setDecay(0, Long.MAX_VALUE)));
    out.put("purge", failure(() -> NativeMemory.purge()));
    out.put("set_decay", failure(() -> NativeMemory.setDecay(1000, 1000)));
    out.put("background", failure(() -> NativeMemory.enableBackgroundThreads()));
    out.put("flush", failure(() -> NativeMemory.flushThreadCache()));
    out.put("trim", failure(() -> NativeMemory.trim()));
    out.put("unknown_key", failure(() -> NativeMemory.mallctl("stats.no_such_key")));
  }

  /** {@code threads} threads at once: stats, breakdown, remedies, allocation. */
  static void concurrent(int threads, Map<String, Object> out) throws Exception {
    boolean jemalloc = NativeMemory.allocator().isJemalloc();
    ExecutorService pool = Executors.newFixedThreadPool(threads);
    List<Future<String>> results = new ArrayList<>();
    for (int t = 0; t < threads; t++) {
      final int id = t;
      results.add(
          pool.submit(
              () -> {
                for (int i = 0; i < 20; i++) {
                  ByteBuffer b = ByteBuffer.allocateDirect(64 << 10);
                  NativeMemory.stats();
                  NativeMemory.breakdown();
                  switch ((id + i) % 4) {
                    case 0:
                      if (jemalloc) {
                        NativeMemory.purge();
                      } else {
                        NativeMemory.trim();
                      }
                      break;
                    case 1:
                      if (jemalloc) {
                        NativeMemory.setDecay(10_000, 0);
                      }
                      break;
                    case 2:
                      if (jemalloc) {
                        NativeMemory.flushThreadCache();
                      }
                      break;
                    default:
                      NativeMemory.rawAllocatorStats();
                  }
                  free(b);
                }
                return "ok";
              }));
    }
    int ok = 0;
    List<String> errors = new ArrayList<>();
    for (Future<String> f : results) {
      try {
        ok += f.get().equals("ok") ? 1 : 0;
      } catch (Exception e) {
        errors.add(String.valueOf(e.getCause()));
      }
    }
    pool.shutdown();
    out.put("ok", ok);
    out.put("errors", errors);
    out.put("stats_after", NativeMemory.stats().toJson());
  }

  static List<ByteBuffer> allocateDirect(int mib) {
    List<ByteBuffer> held = new ArrayList<>();
    for (int i = 0; i < mib; i++) {
      held.add(ByteBuffer.allocateDirect(CHUNK)); // zeroed, so resident
    }
    return held;
  }

  static long directPoolBytes() {
    for (BufferPoolMXBean pool : ManagementFactory.getPlatformMXBeans(BufferPoolMXBean.class)) {
      if (pool.getName().equals("direct")) {
        return pool.getMemoryUsed();
      }
    }
    throw new IllegalStateException("no direct buffer pool");
  }

  /** Frees a direct buffer now instead of at some later GC. */
  static void free(ByteBuffer buffer) throws Exception {
    Class<?> unsafeClass = Class.forName("sun.misc.Unsafe");
    Field theUnsafe = unsafeClass.getDeclaredField("theUnsafe");
    theUnsafe.setAccessible(true);
    Method invokeCleaner = unsafeClass.getMethod("invokeCleaner", ByteBuffer.class);
    invokeCleaner.invoke(theUnsafe.get(null), buffer);
  }

  interface Call {
    Object run();
  }

  /** "ok" or the exception's class and message. */
  static Map<String, Object> failure(Call call) {
    Map<String, Object> r = new LinkedHashMap<>();
    try {
      call.run();
      r.put("class", "ok");
    } catch (NativeMemoryException | IllegalArgumentException e) {
      r.put("class", e.getClass().getSimpleName());
      r.put("message", e.getMessage());
    }
    return r;
  }
}
