package dev.nativemem.tests.handles.agent;

import static dev.nativemem.tests.handles.SourceLine.here;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.nativemem.HandleReport;
import dev.nativemem.HandleScope;
import dev.nativemem.KnownLeak;
import dev.nativemem.NativeHandles;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.rocksdb.BlockBasedTableConfig;
import org.rocksdb.ColumnFamilyDescriptor;
import org.rocksdb.ColumnFamilyHandle;
import org.rocksdb.ColumnFamilyOptions;
import org.rocksdb.DBOptions;
import org.rocksdb.LRUCache;
import org.rocksdb.Options;
import org.rocksdb.RocksDB;

/**
 * The first incident, exactly: options fetched with {@code getDescriptor().getOptions()} and never
 * closed keep the shared block cache alive after its Java object was closed.
 */
class ZombieCacheTest {
  private static final long CAPACITY = 48L << 20;

  @TempDir Path dir;

  @Test
  void closedCacheRetainedByFetchedOptionsIsReportedWithCapacityAndLine() throws Exception {
    RocksDB.loadLibrary();
    int line;
    ColumnFamilyOptions fetched;
    try (HandleScope scope = NativeHandles.scope("zombie")) {
      LRUCache cache = new LRUCache(CAPACITY);
      ColumnFamilyOptions columnOptions =
          new ColumnFamilyOptions()
              .setTableFormatConfig(new BlockBasedTableConfig().setBlockCache(cache));
      List<ColumnFamilyHandle> handles = new ArrayList<>();
      try (DBOptions options =
              new DBOptions().setCreateIfMissing(true).setCreateMissingColumnFamilies(true);
          RocksDB db =
              RocksDB.open(
                  options,
                  dir.resolve("job").toString(),
                  List.of(new ColumnFamilyDescriptor(RocksDB.DEFAULT_COLUMN_FAMILY, columnOptions)),
                  handles)) {
        db.put("k".getBytes(), "v".getBytes());
        line = here() + 1;
        fetched = handles.get(0).getDescriptor().getOptions();
        handles.forEach(ColumnFamilyHandle::close);
      }
      columnOptions.close();
      cache.close();

      HandleReport report = NativeHandles.report();
      assertEquals(1, report.zombieCaches().size(), report.toString());
      HandleReport.ZombieCache zombie = report.zombieCaches().get(0);
      assertEquals(CAPACITY, zombie.capacityBytes());
      assertEquals(CAPACITY, report.zombieCacheCapacityBytes());
      // The memory breakdown shows the same zombie capacity beside the allocator's numbers.
      dev.nativemem.MemoryBreakdown breakdown = dev.nativemem.NativeMemory.breakdown();
      assertEquals(CAPACITY, breakdown.handles().zombieCacheCapacityBytes());
      assertTrue(breakdown.toJson().contains("\"zombie_cache_capacity_bytes\":" + CAPACITY));
      assertTrue(
          breakdown.toString().contains("zombie caches (closed in Java, held natively)"),
          breakdown.toString());
      assertEquals("LRUCache", zombie.cacheKind());
      assertEquals(1, zombie.retainers().size(), report.toString());
      HandleReport.Retainer retainer = zombie.retainers().get(0);
      assertEquals("ColumnFamilyOptions", retainer.kind());
      assertEquals("open", retainer.state());
      assertTrue(
          retainer.stack().contains("(ZombieCacheTest.java:" + line + ")"),
          line + " not in\n" + retainer.stack());
      assertTrue(report.toString().contains("LRUCache of 48.0 MiB capacity"), report.toString());
      // The open record carries RocksDB's own native handle and the creating thread.
      long nativeHandle = fetched.getNativeHandle();
      String thread = Thread.currentThread().getName();
      assertTrue(
          report.oldestOpen().stream()
              .anyMatch(
                  o ->
                      o.kind().equals("ColumnFamilyOptions")
                          && o.address() == nativeHandle
                          && o.thread().equals(thread)),
          report.toJson());

      // RocksDB's own view: a database opened with the fetched options still uses that cache.
      try (DBOptions options = new DBOptions().setCreateIfMissing(true);
          Options reopened = new Options(options, fetched);
          RocksDB db = RocksDB.open(reopened, dir.resolve("probe").toString())) {
        assertEquals(CAPACITY, db.getLongProperty("rocksdb.block-cache-capacity"));
      }

      // Dropped without close: the retainer is now a leak, and the cache stays a zombie.
      fetched = null;
      String failure = scope.check(KnownLeak.ROCKSDB_DEFAULT_READ_OPTIONS);
      assertTrue(failure != null && failure.contains("1 leaked ColumnFamilyOptions"), failure);
      HandleReport after = NativeHandles.report();
      assertEquals("leaked", after.zombieCaches().get(0).retainers().get(0).state());
    }
    Files.walk(dir).count();
  }
}
