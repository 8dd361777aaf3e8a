package dev.nativemem.agent;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.nativemem.handles.tracking.RocksFamily;
import java.util.EnumSet;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The same base classes are instrumented in every RocksDB family the options track. */
class HandleTransformerFamiliesTest {
  private static final List<String> BASES =
      List.of(
          "AbstractImmutableNativeReference",
          "RocksObject",
          "RocksMutableObject",
          "LRUCache",
          "HyperClockCache",
          "Options",
          "ColumnFamilyOptions",
          "ColumnFamilyHandle",
          "RocksDB",
          "TtlDB");

  @Test
  void forstsBaseClassesAreInstrumentedLikeRocksDbs() {
    HandleTransformer both = new HandleTransformer(EnumSet.allOf(RocksFamily.class), false);
    for (String base : BASES) {
      assertTrue(both.instruments("org/rocksdb/" + base), base);
      assertTrue(both.instruments("org/forstdb/" + base), base);
    }
    assertFalse(both.instruments("org/forstdb/ReadOptions"));
    assertFalse(both.instruments("org/apache/flink/state/forst/ForStOperationUtils"));
  }

  @Test
  void aFamilyNotTrackedIsLeftAlone() {
    HandleTransformer rocksOnly = new HandleTransformer(EnumSet.of(RocksFamily.ROCKSDB), false);
    assertTrue(rocksOnly.instruments("org/rocksdb/RocksObject"));
    assertFalse(rocksOnly.instruments("org/forstdb/RocksObject"));
    HandleTransformer none = new HandleTransformer(EnumSet.noneOf(RocksFamily.class), true);
    assertFalse(none.instruments("org/rocksdb/RocksObject"));
    assertTrue(none.instruments("java/util/zip/Inflater"));
  }
}
