import dev.nativemem.memory.AllocatorStats;
import dev.nativemem.NativeMemory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import java.util.stream.Stream;
import java.util.zip.Deflater;
import org.rocksdb.BlockBasedTableConfig;
import org.rocksdb.LRUCache;
import org.rocksdb.Options;
import org.rocksdb.RocksDB;
import org.rocksdb.WriteBufferManager;

/**
 * The arena benchmark's workload, shaped like a Flink TaskManager on RocksDB state: {@link #DBS}
 * RocksDB instances (one per slot) sharing one block cache and write buffer manager, with their own
 * flush and compaction threads; {@code threads} task threads that come and go (each lives 0.5 to 3
 * s, then exits and a fresh thread takes its place, as tasks are redeployed); each operation a
 * memtable insert of 64 B to 4 KiB, a point read through the shared cache, and every
 * 16th a zlib round trip of a 16 to 64 KiB record with fresh streams; each thread also holds two
 * long-lived Deflaters (about 256 KiB of native memory each, as network and compression buffers),
 * one replaced every 256 operations.
 *
 * <p>Samples RSS and the allocator every 250 ms; prints throughput, peak RSS, the peak of resident
 * minus allocated (fragmentation) and, at the end, jemalloc's statistics per arena.
 *
 * <p>Compiled with bench/Measurement.java; {@code ArenaWorkload <threads> <seconds>}.
 */
public final class ArenaWorkload {
  private static final int DBS = 4;
  private static final int KEYS = 400_000;
  private static final long CACHE_BYTES = 64L << 20;
  private static final long WRITE_BUFFERS_BYTES = 32L << 20;

  public static void main(String[] args) throws Exception {
    int threads = Integer.parseInt(args[0]);
    int seconds = Integer.parseInt(args[1]);
    RocksDB.loadLibrary();
    Path dir = Files.createTempDirectory("nativemem-arenas");
    List<RocksDB> dbs = new ArrayList<>();
    try (LRUCache cache = new LRUCache(CACHE_BYTES);
        WriteBufferManager buffers = new WriteBufferManager(WRITE_BUFFERS_BYTES, cache);
        Options options =
            new Options()
                .setCreateIfMissing(true)
                .setWriteBufferSize(4L << 20)
                .setWriteBufferManager(buffers)
                .setMaxBackgroundJobs(8)
                .setTableFormatConfig(new BlockBasedTableConfig().setBlockCache(cache))) {
      for (int i = 0; i < DBS; i++) {
        dbs.add(RocksDB.open(options, dir.resolve("db" + i).toString()));
      }
      AtomicBoolean running = new AtomicBoolean(true);
      AtomicBoolean measuring = new AtomicBoolean(false);
      LongAdder ops = new LongAdder();
      AtomicLong threadsStarted = new AtomicLong();
      List<Thread> slots = new ArrayList<>();
      for (int t = 0; t < threads; t++) {
        Thread slot =
            new Thread(
                () -> {
                  // One task slot: task threads one after the other, each a fresh thread.
                  while (running.get()) {
                    Thread task = new Thread(() -> task(dbs, running, measuring, ops));
                    task.start();
                    threadsStarted.incrementAndGet();
                    joinQuietly(task);
                  }
                });
        slot.start();
        slots.add(slot);
      }
      Sampler sampler = new Sampler();
      sampler.start();
      Thread.sleep(3000); // warm-up: JIT, caches, memtables, arenas
      Measurement.throughput(measuring, ops, seconds);
      sampler.stopSampling();
      System.out.println("THREADS_STARTED " + threadsStarted.get());
      System.out.println("PEAK_RSS " + Measurement.peakRssBytes());
      System.out.println("PEAK_RESIDENT " + sampler.peakResident);
      System.out.println("PEAK_FRAGMENTATION " + sampler.peakFragmentation);
      printArenas();
      running.set(false);
      for (Thread slot : slots) {
        slot.join();
      }
    } finally {
      for (RocksDB db : dbs) {
        db.close();
      }
      try (Stream<Path> walk = Files.walk(dir)) {
        walk.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
      }
    }
  }

  private static void task(
      List<RocksDB> dbs, AtomicBoolean running, AtomicBoolean measuring, LongAdder ops) {
    ThreadLocalRandom random = ThreadLocalRandom.current();
    RocksDB db = dbs.get(random.nextInt(dbs.size()));
    byte[] record = new byte[16 * 1024 + random.nextInt(48 * 1024)];
    for (int i = 0; i < record.length; i++) {
      record[i] = (byte) (i % 251 < 200 ? i % 13 : random.nextInt());
    }
    byte[] packed = new byte[record.length + 1024];
    byte[] unpacked = new byte[record.length];
    Deflater[] held = {new Deflater(), new Deflater()};
    // A task lives 0.5 to 3 s, whatever the machine's speed, so threads come and go in every run.
    long end = System.nanoTime() + (500 + random.nextInt(2500)) * 1_000_000L;
    try {
      for (int n = 1; System.nanoTime() < end && running.get(); n++) {
        db.put(key(random.nextInt(KEYS)), new byte[64 + random.nextInt(4033)]);
        db.get(key(random.nextInt(KEYS)));
        if ((n & 15) == 0) {
          ZlibRoundTrip.run(record, packed, unpacked);
        }
        if (n % 256 == 0) {
          int i = random.nextInt(held.length);
          held[i].end();
          held[i] = new Deflater();
        }
        if (measuring.get()) {
          ops.increment();
        }
      }
    } catch (Exception e) {
      throw new IllegalStateException(e);
    } finally {
      for (Deflater d : held) {
        d.end();
      }
    }
  }

  /** The peaks of jemalloc's resident bytes and resident minus allocated, every 250 ms. */
  private static final class Sampler extends Thread {
    volatile boolean stopped;
    volatile long peakFragmentation;
    volatile long peakResident;

    Sampler() {
      setDaemon(true);
    }

    @Override
    public void run() {
      while (!stopped) {
        NativeMemory.stats()
            .jemalloc()
            .ifPresent(
                j -> {
                  peakResident = Math.max(peakResident, j.residentBytes());
                  peakFragmentation =
                      Math.max(peakFragmentation, j.residentBytes() - j.allocatedBytes());
                });
        try {
          Thread.sleep(250);
        } catch (InterruptedException e) {
          return;
        }
      }
    }

    void stopSampling() {
      stopped = true;
    }
  }

  /**
   * jemalloc's totals, then one line per arena that holds memory: index, threads, allocated,
   * resident, dirty and retained bytes (jemalloc's {@code stats.arenas.<i>.*}).
   */
  private static void printArenas() {
    AllocatorStats.Jemalloc j =
        NativeMemory.stats()
            .jemalloc()
            .orElseThrow(() -> new IllegalStateException("not served by jemalloc"));
    System.out.println(
        "END allocated "
            + j.allocatedBytes()
            + " resident "
            + j.residentBytes()
            + " dirty "
            + j.dirtyBytes()
            + " retained "
            + j.retainedBytes()
            + " metadata "
            + j.metadataBytes());
    long page = NativeMemory.mallctl("arenas.page");
    long narenas = NativeMemory.mallctl("arenas.narenas");
    int used = 0;
    for (AllocatorStats.Arena arena : j.arenas()) {
      String at = "stats.arenas." + arena.index() + ".";
      long allocated = arena.smallAllocatedBytes() + arena.largeAllocatedBytes();
      long resident = NativeMemory.mallctl(at + "resident");
      if (resident == 0) {
        continue;
      }
      used++;
      System.out.println(
          "ARENA "
              + arena.index()
              + " threads "
              + arena.threads()
              + " allocated "
              + allocated
              + " resident "
              + resident
              + " dirty "
              + arena.dirtyPages() * page
              + " retained "
              + NativeMemory.mallctl(at + "retained"));
    }
    System.out.println("ARENAS narenas " + narenas + " holding_memory " + used);
  }

  private static byte[] key(int i) {
    return ("key" + i).getBytes(StandardCharsets.UTF_8);
  }

  private static void joinQuietly(Thread thread) {
    try {
      thread.join();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
