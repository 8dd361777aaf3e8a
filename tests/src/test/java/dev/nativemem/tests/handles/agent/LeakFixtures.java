package dev.nativemem.tests.handles.agent;

import static dev.nativemem.tests.handles.SourceLine.here;

import dev.nativemem.junit.NativeLeakCheck;
import dev.nativemem.junit.NativeLeakSettings;
import java.io.InputStream;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
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

  /** A jar with a resource, set by the test; streams kept unclosed until the test closes them. */
  static volatile Path jar;

  static final List<InputStream> UNCLOSED = new ArrayList<>();

  static void readWithoutClosing() throws Exception {
    URLClassLoader loader = new URLClassLoader(new URL[] {jar.toUri().toURL()}, null);
    InputStream in = loader.getResourceAsStream("data.txt");
    in.read();
    UNCLOSED.add(in);
  }

  @ExtendWith(NativeLeakCheck.class)
  static class UnclosedResourceStream {
    @Test
    void reads() throws Exception {
      readWithoutClosing();
    }
  }

  @ExtendWith(NativeLeakCheck.class)
  @NativeLeakSettings(
      known = @NativeLeakSettings.Known(id = "unclosed-getResourceAsStream", reason = "fixture"))
  static class UnclosedResourceStreamAccepted {
    @Test
    void reads() throws Exception {
      readWithoutClosing();
    }
  }

  /** A catalogue id written as a kind: a configuration error that says to write id = ... */
  @ExtendWith(NativeLeakCheck.class)
  @NativeLeakSettings(known = @NativeLeakSettings.Known(kind = "unclosed-getResourceAsStream"))
  static class CatalogueIdAsKind {
    @Test
    void reads() throws Exception {
      readWithoutClosing();
    }
  }

  /** An accepted catalogue leak beside a failing one: the failure shows the reason given. */
  @ExtendWith(NativeLeakCheck.class)
  @NativeLeakSettings(
      known =
          @NativeLeakSettings.Known(
              id = "unclosed-getResourceAsStream",
              reason = "the test closes the stream itself"))
  static class AcceptedReasonShown {
    @Test
    void readsAndLeaks() throws Exception {
      readWithoutClosing();
      new ColumnFamilyOptions();
    }
  }
}
