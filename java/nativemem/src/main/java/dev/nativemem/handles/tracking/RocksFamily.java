package dev.nativemem.handles.tracking;

/**
 * RocksDB's Java API and the forks that ship it under another package with the same classes: the
 * one table the agent's instrumentation, the kinds, the tracking groups and the creation sites
 * read. ForSt ({@code com.ververica:forstjni}, Flink 2.x's disaggregated state backend) is
 * RocksJava in {@code org.forstdb}.
 *
 * <p>A kind is its base class's simple name, headed by the family's prefix: {@code ReadOptions} for
 * {@code org.rocksdb.ReadOptions}, {@code forst.ReadOptions} for {@code org.forstdb.ReadOptions};
 * so one JVM with both (Flink 2.x ships both backends) keeps them apart.
 */
public enum RocksFamily {
  ROCKSDB("org.rocksdb.", "", TrackingOptions.ROCKSDB_GROUP),
  FORST("org.forstdb.", "forst.", TrackingOptions.FORST_GROUP);

  private final String packagePrefix;
  private final String internalPrefix;
  private final String kindPrefix;
  private final String group;

  RocksFamily(String packagePrefix, String kindPrefix, String group) {
    this.packagePrefix = packagePrefix;
    this.internalPrefix = packagePrefix.replace('.', '/');
    this.kindPrefix = kindPrefix;
    this.group = group;
  }

  /** The family of a class named {@code org.rocksdb.X} or {@code org.forstdb.X}, or null. */
  public static RocksFamily ofClass(String name) {
    for (RocksFamily family : values()) {
      if (name.startsWith(family.packagePrefix)) {
        return family;
      }
    }
    return null;
  }

  /** The family of a class named {@code org/rocksdb/X} (the JVM's internal form), or null. */
  public static RocksFamily ofInternalName(String name) {
    for (RocksFamily family : values()) {
      if (name.startsWith(family.internalPrefix)) {
        return family;
      }
    }
    return null;
  }

  /** {@code org.rocksdb.}: the package with its dot. */
  public String packagePrefix() {
    return packagePrefix;
  }

  /** {@code org/rocksdb/}: the package as class files name it. */
  public String internalPrefix() {
    return internalPrefix;
  }

  /** The tracking group ({@code include=}/{@code exclude=}) of this family's kinds. */
  public String group() {
    return group;
  }

  /** The kind of this family's class {@code simpleName}: {@code forst.ReadOptions}. */
  public String kind(String simpleName) {
    return kindPrefix + simpleName;
  }

  /** The class {@code simpleName} of this family, dotted: {@code org.forstdb.RocksObject}. */
  public String className(String simpleName) {
    return packagePrefix + simpleName;
  }
}
