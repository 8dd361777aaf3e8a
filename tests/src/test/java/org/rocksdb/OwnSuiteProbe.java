package org.rocksdb;

import static dev.nativemem.tests.handles.SourceLine.here;

/**
 * Stands for RocksDB's own Java tests: a class in package {@code org.rocksdb} that is not in the
 * RocksDB jar, so its frames are application code.
 */
public final class OwnSuiteProbe {
  private OwnSuiteProbe() {}

  /** Leaks one {@code ColumnFamilyOptions}; returns the line that created it. */
  public static int leak() {
    int line = here() + 1;
    new ColumnFamilyOptions();
    return line;
  }
}
