package dev.nativemem.tests.handles.agent;

import static dev.nativemem.tests.handles.SourceLine.here;

import dev.nativemem.junit.NativeLeakCheck;
import dev.nativemem.junit.NativeLeakSettings;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.rocksdb.ColumnFamilyOptions;
import org.rocksdb.RocksDB;

/**
 * Test classes run by {@link LeakCheckExtensionTest} through the JUnit test kit, never directly.
 */
final class LeakFixtures {
  static final int LEAKED = 7;

  private LeakFixtures() {}

  @ExtendWith(NativeLeakCheck.class)
  static class LeaksOptions {
    static volatile int line;

    @Test
    void leaks() {
      RocksDB.loadLibrary();
      for (int i = 0; i < LEAKED; i++) {
        line = here() + 1;
        new ColumnFamilyOptions();
      }
    }
  }

  @ExtendWith(NativeLeakCheck.class)
  static class ClosesOptions {
    @Test
    void closes() {
      RocksDB.loadLibrary();
      for (int i = 0; i < LEAKED; i++) {
        try (ColumnFamilyOptions options = new ColumnFamilyOptions()) {
          options.setWriteBufferSize(1 << 20);
        }
      }
    }
  }

  @ExtendWith(NativeLeakCheck.class)
  @NativeLeakSettings(perMethod = true)
  static class PerMethod {
    @Test
    void clean() {
      new ColumnFamilyOptions().close();
    }

    @Test
    void leaky() {
      new ColumnFamilyOptions();
    }
  }

  @ExtendWith(NativeLeakCheck.class)
  @NativeLeakSettings(
      known = @NativeLeakSettings.Known(kind = "ColumnFamilyOptions", reason = "fixture"))
  static class KnownLeakAccepted {
    @Test
    void leaks() {
      new ColumnFamilyOptions();
    }
  }
}
