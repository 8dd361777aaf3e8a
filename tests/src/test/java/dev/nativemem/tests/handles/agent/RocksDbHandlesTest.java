package dev.nativemem.tests.handles.agent;

import static dev.nativemem.tests.handles.SourceLine.here;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.nativemem.handles.HandleScope;
import dev.nativemem.handles.KnownLeak;
import dev.nativemem.handles.NativeHandles;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.rocksdb.ColumnFamilyDescriptor;
import org.rocksdb.ColumnFamilyHandle;
import org.rocksdb.ColumnFamilyOptions;
import org.rocksdb.DBOptions;
import org.rocksdb.ReadOptions;
import org.rocksdb.RocksDB;
import org.rocksdb.Snapshot;
import org.rocksdb.Statistics;

class RocksDbHandlesTest {
  private static final int RESTARTS = 3;

  @TempDir Path dir;

  /** The second incident: a Statistics per backend, never closed, on every restart. */
  @Test
  void statisticsNeverClosedAcrossRestartsIsReportedPerRestart() throws Exception {
    RocksDB.loadLibrary();
    int line = -1;
    try (HandleScope scope = NativeHandles.scope("restarts")) {
      for (int restart = 0; restart < RESTARTS; restart++) {
        line = here() + 1;
        Statistics statistics = new Statistics();
        try (ColumnFamilyOptions columnOptions = new ColumnFamilyOptions();
            DBOptions options = new DBOptions().setCreateIfMissing(true).setStatistics(statistics);
            RocksDB db =
                RocksDB.open(
                    options,
                    dir.resolve("backend").toString(),
                    List.of(
                        new ColumnFamilyDescriptor(RocksDB.DEFAULT_COLUMN_FAMILY, columnOptions)),
                    new ArrayList<>())) {
          db.put(("restart" + restart).getBytes(), "v".getBytes());
        }
      }
      String failure = scope.check(KnownLeak.ROCKSDB_DEFAULT_READ_OPTIONS);
      assertTrue(failure != null, "three Statistics were never closed");
      assertTrue(
          failure.startsWith("native handles leaked in 'restarts': " + RESTARTS + " leaked"),
          failure);
      assertTrue(
          failure.contains(
              RESTARTS
                  + " leaked Statistics, created at "
                  + RocksDbHandlesTest.class.getName()
                  + ".statisticsNeverClosedAcrossRestartsIsReportedPerRestart(RocksDbHandlesTest.java:"
                  + line
                  + ")"),
          failure);
      assertTrue(failure.contains("known leaks, not failed"), failure);
      assertTrue(failure.contains("ReadOptions: RocksDB never closes"), failure);
    }
  }

  /** RocksDB's own ReadOptions, one per database object collected. */
  private static long knownLeaks(HandleScope scope) {
    return NativeHandles.report().kind("ReadOptions").leaked() > 0 ? scope.leaked() : 0;
  }

  /** Column family handles and snapshots: ownership passes to RocksDB, so they are no leak. */
  @Test
  void handlesTransferredToRocksDbAreNotLeaks() throws Exception {
    RocksDB.loadLibrary();
    try (HandleScope scope = NativeHandles.scope("transferred")) {
      try (ColumnFamilyOptions columnOptions = new ColumnFamilyOptions();
          DBOptions options =
              new DBOptions().setCreateIfMissing(true).setCreateMissingColumnFamilies(true)) {
        List<ColumnFamilyHandle> handles = new ArrayList<>();
        try (RocksDB db =
            RocksDB.open(
                options,
                dir.resolve("cf").toString(),
                List.of(
                    new ColumnFamilyDescriptor(RocksDB.DEFAULT_COLUMN_FAMILY, columnOptions),
                    new ColumnFamilyDescriptor("second".getBytes(), columnOptions)),
                handles)) {
          db.put(handles.get(1), "k".getBytes(), "v1".getBytes());
          Snapshot snapshot = db.getSnapshot();
          db.put(handles.get(1), "k".getBytes(), "v2".getBytes());
          try (ReadOptions read = new ReadOptions().setSnapshot(snapshot)) {
            assertArrayEquals("v1".getBytes(), db.get(handles.get(1), read, "k".getBytes()));
          }
          db.releaseSnapshot(snapshot);
          db.getDefaultColumnFamily();
          // The handles are closed by db.close(), as RocksDB documents.
        }
      }
      assertNull(scope.check(KnownLeak.ROCKSDB_DEFAULT_READ_OPTIONS));
      // The snapshot was handed to RocksDB (disOwnNativeHandle): transferred, never leaked.
      assertTrue(scope.transferred() >= 1, scope.toString());
      assertEquals(0, scope.leaked() - knownLeaks(scope), scope.toString());
    }
  }
}
