package dev.nativemem.agent;

import static java.util.stream.Collectors.toList;
import static org.junit.jupiter.api.Assertions.assertEquals;
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

  /**
   * The classes a family's batch loads and the signatures the core's ClassPrepare watch reports are
   * exactly the classes instrumented: one missing from the watch would go uninstrumented.
   */
  @Test
  void theWatchAndTheBatchNameExactlyTheInstrumentedClasses() {
    HandleTransformer rocks = new HandleTransformer(EnumSet.of(RocksFamily.ROCKSDB), true);
    List<String> names = rocks.classNames(RocksFamily.ROCKSDB);
    assertTrue(names.containsAll(BASES.stream().map(b -> "org.rocksdb." + b).collect(toList())));
    assertEquals(List.of(), rocks.classNames(RocksFamily.FORST));
    List<String> signatures = List.of(rocks.signaturePrefixes());
    for (String name : names) {
      String internal = name.replace('.', '/');
      assertTrue(rocks.instruments(internal), name);
      assertTrue(signatures.contains("L" + internal + ";"), name);
    }
    for (String signature : signatures) {
      if (signature.startsWith("Lorg/")) {
        String internal = signature.substring(1, signature.length() - 1);
        assertTrue(rocks.instruments(internal), signature);
      }
    }
    assertFalse(signatures.stream().anyMatch(s -> "Lorg/rocksdb/ReadOptions;".startsWith(s)));
  }
}
