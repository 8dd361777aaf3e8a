package dev.nativemem.tests;

import dev.nativemem.NativeMemory;
import dev.nativemem.profile.HeapProfiler;
import dev.nativemem.profile.sampling.SamplingStatus;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.Arrays;
import org.rocksdb.BlockBasedTableConfig;
import org.rocksdb.CompressionType;
import org.rocksdb.LRUCache;
import org.rocksdb.Options;
import org.rocksdb.RocksDB;
import org.rocksdb.RocksIterator;

/**
 * Runs in a forked JVM on plain glibc: starts the import-rewriting engine, only then loads
 * rocksdbjni (extracted and {@code System.load}ed by {@link RocksDB#loadLibrary()}), fills a block
 * cache by reading back a flushed table, and prints RocksDB's own {@code rocksdb.block-cache-usage}
 * beside a heap dump.
 *
 * <p>Args: the database directory, the dump's path, the sample interval in bytes.
 */
public final class BlockCacheChild {
  static final int KEYS = 24_000;
  static final int VALUE_BYTES = 1_000;

  public static void main(String[] args) throws Exception {
    Path dir = Paths.get(args[0]);
    HeapProfiler profiler = NativeMemory.profiling();
    profiler.resetWithSampleInterval(Long.parseLong(args[2]));
    profiler.start();
    System.out.println("ENGINE " + SamplingStatus.read().engine());
    System.out.println("LOADED_BEFORE " + rocksdbMapped());
    System.out.println("HOOKED_BEFORE " + hookedEntries());
    RocksDB.loadLibrary();
    System.out.println("LOADED_AFTER " + rocksdbMapped());
    System.out.println("HOOKED_AFTER " + hookedEntries());
    try (LRUCache cache = new LRUCache(512L << 20);
        Options options =
            new Options()
                .setCreateIfMissing(true)
                .setCompressionType(CompressionType.NO_COMPRESSION)
                .setTableFormatConfig(
                    new BlockBasedTableConfig().setBlockCache(cache).setBlockSize(16 << 10));
        RocksDB db = RocksDB.open(options, dir.toString())) {
      byte[] value = new byte[VALUE_BYTES];
      Arrays.fill(value, (byte) 'v');
      for (int i = 0; i < KEYS; i++) {
        db.put(String.format("key%08d", i).getBytes(), value);
      }
      try (org.rocksdb.FlushOptions flush = new org.rocksdb.FlushOptions().setWaitForFlush(true)) {
        db.flush(flush);
      }
      long read = 0;
      try (RocksIterator it = db.newIterator()) {
        for (it.seekToFirst(); it.isValid(); it.next()) {
          read += it.value().length;
        }
      }
      if (read != (long) KEYS * VALUE_BYTES) {
        throw new IllegalStateException("read back " + read + " bytes");
      }
      System.out.println("USAGE " + db.getLongProperty("rocksdb.block-cache-usage"));
      System.out.println("DUMP " + NativeMemory.dumpProfile(Paths.get(args[1])).path());
    }
    System.out.println("DONE");
  }

  /** Whether librocksdbjni is mapped into this process now. */
  private static boolean rocksdbMapped() throws java.io.IOException {
    return java.nio.file.Files.readAllLines(Paths.get("/proc/self/maps")).stream()
        .anyMatch(l -> l.contains("librocksdbjni"));
  }

  private static String hookedEntries() {
    return NativeMemory.profiling()
        .toString()
        .replaceAll(".* (\\d+) import entries hooked.*", "$1");
  }
}
