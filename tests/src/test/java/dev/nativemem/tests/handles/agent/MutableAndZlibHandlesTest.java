package dev.nativemem.tests.handles.agent;

import static dev.nativemem.tests.handles.SourceLine.here;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.nativemem.handles.HandleScope;
import dev.nativemem.handles.NativeHandles;
import java.util.zip.Deflater;
import java.util.zip.GZIPOutputStream;
import org.junit.jupiter.api.Test;
import org.rocksdb.RocksDB;
import org.rocksdb.Slice;

/** RocksDB's other branch (RocksMutableObject: slices) and zlib's Deflater. */
class MutableAndZlibHandlesTest {

  @Test
  void slicesAreTrackedThroughRocksMutableObject() {
    RocksDB.loadLibrary();
    try (HandleScope scope = NativeHandles.scope("slices")) {
      try (Slice closed = new Slice("kept")) {
        assertEquals("kept", closed.toString());
      }
      int line = -1;
      for (int i = 0; i < 2; i++) {
        line = here() + 1;
        new Slice("dropped");
      }
      String failure = scope.check();
      assertTrue(
          failure != null
              && failure.contains(
                  "2 leaked Slice, created at "
                      + MutableAndZlibHandlesTest.class.getName()
                      + ".slicesAreTrackedThroughRocksMutableObject(MutableAndZlibHandlesTest.java:"
                      + line
                      + ")"),
          failure);
      assertEquals(1, scope.closed(), scope.toString());
    }
  }

  @Test
  void deflaterFreedByTheCleanerIsALeakAndEndedOneIsNot() throws Exception {
    try (HandleScope scope = NativeHandles.scope("deflaters")) {
      try (GZIPOutputStream gzip = new GZIPOutputStream(java.io.OutputStream.nullOutputStream())) {
        gzip.write(new byte[1024]);
      }
      assertNull(scope.check(), "a closed GZIPOutputStream ends its Deflater");
      int line = here() + 1;
      new Deflater().setLevel(9);
      String failure = scope.check();
      assertTrue(
          failure != null
              && failure.contains(
                  "1 leaked Deflater, created at "
                      + MutableAndZlibHandlesTest.class.getName()
                      + ".deflaterFreedByTheCleanerIsALeakAndEndedOneIsNot(MutableAndZlibHandlesTest.java:"
                      + line
                      + ")"),
          failure);
    }
  }
}
