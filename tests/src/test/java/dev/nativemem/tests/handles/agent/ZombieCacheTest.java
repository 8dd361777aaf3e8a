package dev.nativemem.tests.handles.agent;

import static dev.nativemem.tests.handles.SourceLine.here;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.nativemem.handles.HandleReport;
import dev.nativemem.handles.HandleScope;
import dev.nativemem.handles.KnownLeak;
import dev.nativemem.handles.NativeHandles;
import dev.nativemem.tests.handles.DatabaseOpens;
import dev.nativemem.tests.handles.DatabaseOpens.Fetched;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.rocksdb.BlockBasedTableConfig;
import org.rocksdb.ColumnFamilyDescriptor;
import org.rocksdb.ColumnFamilyHandle;
import org.rocksdb.ColumnFamilyOptions;
import org.rocksdb.DBOptions;
import org.rocksdb.LRUCache;
import org.rocksdb.Options;
import org.rocksdb.RocksDB;
import org.rocksdb.RocksDBException;
import org.rocksdb.TtlDB;

/**
 * The first incident, exactly: options fetched with {@code getDescriptor().getOptions()} and never
 * closed keep the shared block cache alive after its Java object was closed. Then the same through
 * every static open of {@code RocksDB} and its subclasses.
 */
class ZombieCacheTest {
  private static final long CAPACITY = 48L << 20;

  /** Each test below takes its own capacity, so it finds its zombie among the other tests'. */
  private static final AtomicLong NEXT_CAPACITY_MIB = new AtomicLong(64);

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
      dev.nativemem.memory.MemoryBreakdown breakdown = dev.nativemem.NativeMemory.breakdown();
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

  static Stream<Arguments> retentions() {
    return DatabaseOpens.retentions().entrySet().stream()
        .map(e -> Arguments.of(e.getKey(), e.getValue()));
  }

  /**
   * {@code open(Options, path)}: the default family keeps the table configuration of Options.
   * {@code open(DBOptions, path, descriptors, handles)}: each handle keeps its descriptor's, and
   * {@code getDefaultColumnFamily()} leads to the default descriptor's.
   */
  @ParameterizedTest(name = "{0}")
  @MethodSource("retentions")
  void optionsFetchedFromEachOpenRetainTheCache(String name, DatabaseOpens.Retention retention)
      throws Exception {
    RocksDB.loadLibrary();
    long capacity = nextCapacity();
    List<Fetched> fetched = retention.fetch(capacity, dir.resolve("db").toString(), false);
    assertEquals(name.startsWith("families:") ? 2 : 1, fetched.size());
    assertZombieUntilClosed(capacity, fetched);
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("retentions")
  void optionsFetchedFromEachOpenAndClosedLeaveNoZombie(
      String name, DatabaseOpens.Retention retention) throws Exception {
    RocksDB.loadLibrary();
    long capacity = nextCapacity();
    retention.fetch(capacity, dir.resolve("db").toString(), true);
    assertNoZombie(capacity);
  }

  /** {@code TtlDB.createColumnFamilyWithTtl}: the new family keeps its descriptor's cache. */
  @Test
  void familyCreatedWithTtlRetainsTheCache() throws Exception {
    RocksDB.loadLibrary();
    long capacity = nextCapacity();
    LRUCache cache = new LRUCache(capacity);
    ColumnFamilyOptions columnOptions = DatabaseOpens.familyOptionsSharing(cache);
    Fetched fetched;
    try (Options options = new Options().setCreateIfMissing(true);
        TtlDB db = TtlDB.open(options, dir.resolve("db").toString())) {
      try (ColumnFamilyHandle handle =
          db.createColumnFamilyWithTtl(
              new ColumnFamilyDescriptor("expiring".getBytes(), columnOptions), 60)) {
        fetched = DatabaseOpens.familyOptions(handle);
      }
    }
    columnOptions.close();
    cache.close();
    assertZombieUntilClosed(capacity, List.of(fetched));
  }

  /** Both forms of {@code createColumnFamilies}: descriptors, and one options for all names. */
  @Test
  void familiesCreatedTogetherRetainTheCache() throws Exception {
    RocksDB.loadLibrary();
    long capacity = nextCapacity();
    LRUCache cache = new LRUCache(capacity);
    ColumnFamilyOptions columnOptions = DatabaseOpens.familyOptionsSharing(cache);
    List<Fetched> fetched = new java.util.ArrayList<>();
    try (Options options = new Options().setCreateIfMissing(true);
        RocksDB db = RocksDB.open(options, dir.resolve("db").toString())) {
      List<ColumnFamilyHandle> handles = new java.util.ArrayList<>();
      handles.addAll(
          db.createColumnFamilies(
              List.of(new ColumnFamilyDescriptor("described".getBytes(), columnOptions))));
      handles.addAll(db.createColumnFamilies(columnOptions, List.of("named".getBytes())));
      for (ColumnFamilyHandle handle : handles) {
        fetched.add(DatabaseOpens.familyOptions(handle));
        handle.close();
      }
    }
    columnOptions.close();
    cache.close();
    assertZombieUntilClosed(capacity, fetched);
  }

  private static long nextCapacity() {
    return NEXT_CAPACITY_MIB.getAndIncrement() << 20;
  }

  /**
   * A zombie LRUCache of {@code capacity}, retained by exactly the open options {@code fetched}, in
   * creation order, each created on its line; RocksDB agrees. Then closes them: no zombie.
   */
  private void assertZombieUntilClosed(long capacity, List<Fetched> fetched) throws Exception {
    try {
      HandleReport report = NativeHandles.report();
      List<HandleReport.ZombieCache> zombies =
          report.zombieCaches().stream().filter(z -> z.capacityBytes() == capacity).toList();
      assertEquals(1, zombies.size(), capacity + " in\n" + report);
      HandleReport.ZombieCache zombie = zombies.get(0);
      assertEquals("LRUCache", zombie.cacheKind());
      assertEquals(fetched.size(), zombie.retainers().size(), report.toString());
      for (int i = 0; i < fetched.size(); i++) {
        HandleReport.Retainer retainer = zombie.retainers().get(i);
        assertEquals("ColumnFamilyOptions", retainer.kind());
        assertEquals("open", retainer.state());
        String line = "(DatabaseOpens.java:" + fetched.get(i).line() + ")";
        assertTrue(retainer.stack().contains(line), line + " not in\n" + retainer.stack());
      }
      for (int i = 0; i < fetched.size(); i++) {
        Path probe = dir.resolve("probe" + i);
        assertEquals(capacity, blockCacheCapacity(fetched.get(i).options(), probe));
      }
    } finally {
      for (Fetched f : fetched) {
        f.options().close();
      }
    }
    assertNoZombie(capacity);
  }

  private static void assertNoZombie(long capacity) {
    HandleReport report = NativeHandles.report();
    assertTrue(
        report.zombieCaches().stream().noneMatch(z -> z.capacityBytes() == capacity),
        capacity + " in\n" + report);
  }

  /** RocksDB's own view: the block cache capacity of a database opened with {@code options}. */
  private static long blockCacheCapacity(ColumnFamilyOptions options, Path path)
      throws RocksDBException {
    try (DBOptions dbOptions = new DBOptions().setCreateIfMissing(true);
        Options reopened = new Options(dbOptions, options);
        RocksDB db = RocksDB.open(reopened, path.toString())) {
      return db.getLongProperty("rocksdb.block-cache-capacity");
    }
  }
}
