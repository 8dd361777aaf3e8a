package dev.nativemem.handles.tracking;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.nativemem.handles.catalogue.LibraryVersions;
import java.util.Properties;
import org.junit.jupiter.api.Test;

/** ForSt ({@code org.forstdb}) is a RocksDB family of its own: kinds, group, filters, versions. */
class RocksFamilyTest {
  @Test
  void eachPackageHasItsFamilyAndItsKindNames() {
    assertEquals(RocksFamily.ROCKSDB, RocksFamily.ofClass("org.rocksdb.ReadOptions"));
    assertEquals(RocksFamily.FORST, RocksFamily.ofClass("org.forstdb.ReadOptions"));
    assertEquals(RocksFamily.FORST, RocksFamily.ofInternalName("org/forstdb/RocksObject"));
    assertNull(RocksFamily.ofClass("org.forstdbx.ReadOptions"));
    assertNull(RocksFamily.ofClass("org.apache.flink.state.forst.ForStOperationUtils"));
    assertEquals("ReadOptions", RocksFamily.ROCKSDB.kind("ReadOptions"));
    assertEquals("forst.ReadOptions", RocksFamily.FORST.kind("ReadOptions"));
    assertEquals("org.forstdb.RocksObject", RocksFamily.FORST.className("RocksObject"));
    assertEquals("forst", RocksFamily.FORST.group());
  }

  @Test
  void includeAndExcludeTellTheFamiliesApart() {
    TrackingOptions forst = TrackingOptions.parse("include=forst", new Properties());
    assertTrue(forst.tracks("forst.ReadOptions", "forst"));
    assertFalse(forst.tracks("ReadOptions", "rocksdb"));
    assertTrue(forst.tracksGroup("forst"));
    assertFalse(forst.tracksGroup("rocksdb"));
    assertFalse(forst.tracksGroup("zip"));
    TrackingOptions rocks = TrackingOptions.parse("include=rocksdb", new Properties());
    assertFalse(rocks.tracks("forst.ReadOptions", "forst"));
    assertFalse(rocks.tracksGroup("forst"));
    TrackingOptions noForst = TrackingOptions.parse("exclude=forst", new Properties());
    assertFalse(noForst.tracksGroup("forst"));
    assertTrue(noForst.tracksGroup("rocksdb"));
    TrackingOptions oneKind = TrackingOptions.parse("include=forst.Statistics", new Properties());
    assertTrue(oneKind.tracks("forst.Statistics", "forst"));
    assertFalse(oneKind.tracks("Statistics", "rocksdb"));
    assertTrue(oneKind.tracksGroup("forst"));
    assertTrue(TrackingOptions.parse(null, new Properties()).tracksGroup("forst"));
  }

  @Test
  void aJarNamedAsMavenNamesItStatesItsVersion() {
    String artifact = "com.ververica:forstjni";
    assertEquals(
        "0.1.8",
        LibraryVersions.versionInJarName(
            "/root/.m2/repository/com/ververica/forstjni/0.1.8/forstjni-0.1.8.jar", artifact));
    assertNull(LibraryVersions.versionInJarName("/opt/flink/lib/flink-dist-2.3.0.jar", artifact));
    assertNull(LibraryVersions.versionInJarName("/lib/forstjni.jar", artifact));
    assertNull(LibraryVersions.versionInJarName("/lib/forstjni-latest.jar", artifact));
    assertNull(LibraryVersions.versionInJarName("/lib/forstjni-0.1.8.jar.bak", artifact));
    assertNull(LibraryVersions.versionInJarName("/lib/myforstjni-0.1.8.jar", artifact));
  }
}
