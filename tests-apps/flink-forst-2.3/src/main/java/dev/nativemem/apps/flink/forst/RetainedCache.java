package dev.nativemem.apps.flink.forst;

import org.forstdb.BlockBasedTableConfig;
import org.forstdb.ColumnFamilyOptions;
import org.forstdb.LRUCache;
import org.forstdb.RocksDB;

/**
 * ForSt's block cache kept alive by options nobody closed: {@code OPTIONS} column family options
 * share one {@code CAPACITY}-byte LRU cache through their table configuration; the cache is closed,
 * the options are dropped unclosed. Each copy of the options retains the cache natively.
 */
public final class RetainedCache {
  static final long CAPACITY = 8L << 20;
  static final int OPTIONS = 3;

  private RetainedCache() {}

  public static void main(String[] args) throws Exception {
    RocksDB.loadLibrary();
    try (LRUCache cache = new LRUCache(CAPACITY)) {
      for (int i = 0; i < OPTIONS; i++) {
        new ColumnFamilyOptions()
            .setTableFormatConfig(new BlockBasedTableConfig().setBlockCache(cache));
      }
    }
    for (int i = 0; i < 5; i++) {
      System.gc();
      Thread.sleep(100);
    }
  }
}
