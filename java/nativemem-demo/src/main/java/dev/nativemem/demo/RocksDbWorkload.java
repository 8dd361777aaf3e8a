package dev.nativemem.demo;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.stream.Stream;
import org.rocksdb.BlockBasedTableConfig;
import org.rocksdb.LRUCache;
import org.rocksdb.Options;
import org.rocksdb.RocksDB;

/**
 * RocksDB through rocksdbjni: a block cache and memtables in native memory. Loading this class
 * needs rocksdbjni; check {@link ProfilingDemo#rocksDbPresent()} first.
 */
final class RocksDbWorkload {
  private RocksDbWorkload() {}

  /** Opens a database, writes and reads it; returns what must be closed, last first. */
  static List<AutoCloseable> run() throws Exception {
    RocksDB.loadLibrary();
    Path dir = Files.createTempDirectory("nativemem-demo-rocksdb");
    List<AutoCloseable> open = new ArrayList<>();
    LRUCache cache = new LRUCache(64L << 20);
    Options options =
        new Options()
            .setCreateIfMissing(true)
            .setTableFormatConfig(new BlockBasedTableConfig().setBlockCache(cache));
    RocksDB db = RocksDB.open(options, dir.toString());
    byte[] value = new byte[400];
    for (int i = 0; i < 100_000; i++) {
      db.put(("key" + i).getBytes(StandardCharsets.UTF_8), value);
    }
    try (org.rocksdb.FlushOptions flush = new org.rocksdb.FlushOptions().setWaitForFlush(true)) {
      db.flush(flush);
    }
    long found = 0;
    for (int i = 0; i < 100_000; i += 3) {
      if (db.get(("key" + i).getBytes(StandardCharsets.UTF_8)) != null) {
        found++;
      }
    }
    System.out.println(
        "    RocksDB: 100000 puts, flush, "
            + found
            + " gets through a 64 MiB block cache ("
            + db.getProperty("rocksdb.block-cache-usage")
            + " bytes in use)");
    // Closed in reverse order of opening, then the files removed.
    open.add(
        () -> {
          try (Stream<Path> walk = Files.walk(dir)) {
            walk.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
          }
        });
    open.add(cache);
    open.add(options);
    open.add(db);
    java.util.Collections.reverse(open);
    return open;
  }
}
