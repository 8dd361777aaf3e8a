package dev.nativemem.tests.handles;

import static dev.nativemem.tests.handles.SourceLine.here;

import dev.nativemem.NativeMemory;
import dev.nativemem.base.Advice;
import dev.nativemem.handles.NativeHandles;
import java.util.ArrayList;
import java.util.List;
import java.util.zip.Deflater;
import java.util.zip.Inflater;
import org.rocksdb.BlockBasedTableConfig;
import org.rocksdb.ColumnFamilyOptions;
import org.rocksdb.LRUCache;
import org.rocksdb.RocksDB;
import org.rocksdb.Statistics;

/**
 * Plants open Inflaters, open Deflaters (zlib memory NMT does not see), leaked Statistics and a
 * zombie cache, each on a known line, then prints {@code NativeMemory.advice()}: one {@code advice
 * <code> <message>} line each.
 */
public final class AdviceScenario {
  static final int INFLATERS = 150;
  static final int DEFLATERS = 200;
  static final int STATISTICS = 3;

  private AdviceScenario() {}

  public static void main(String[] args) throws Exception {
    RocksDB.loadLibrary();
    NativeMemory.advice(); // the baseline the growth is measured from
    List<Object> kept = new ArrayList<>();
    int line = -1;
    for (int i = 0; i < INFLATERS; i++) {
      line = here() + 1;
      kept.add(new Inflater());
    }
    System.out.println("inflater_line " + line);
    for (int i = 0; i < DEFLATERS; i++) {
      Deflater deflater = new Deflater();
      deflater.setInput(new byte[1024]);
      deflater.deflate(new byte[1024]); // zlib allocates its window and hash tables
      kept.add(deflater);
    }
    for (int i = 0; i < STATISTICS; i++) {
      line = here() + 1;
      new Statistics();
    }
    System.out.println("statistics_line " + line);
    System.out.println("cache_line " + (here() + 1));
    LRUCache cache = new LRUCache(24L << 20);
    System.out.println("retainer_line " + (here() + 1));
    ColumnFamilyOptions retainer = new ColumnFamilyOptions();
    retainer.setTableFormatConfig(new BlockBasedTableConfig().setBlockCache(cache));
    kept.add(retainer);
    cache.close();
    long deadline = System.nanoTime() + 10_000_000_000L;
    while (NativeHandles.report().kind("Statistics").leaked() < STATISTICS
        && System.nanoTime() < deadline) {
      System.gc();
      Thread.sleep(50);
    }
    for (Advice advice : NativeMemory.advice()) {
      System.out.println("advice " + advice.code() + " " + advice.message().replace('\n', ' '));
    }
    System.out.println("kept " + kept.size());
  }
}
