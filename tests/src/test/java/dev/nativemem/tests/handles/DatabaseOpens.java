package dev.nativemem.tests.handles;

import static dev.nativemem.tests.handles.SourceLine.here;

import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.rocksdb.BlockBasedTableConfig;
import org.rocksdb.Cache;
import org.rocksdb.ColumnFamilyDescriptor;
import org.rocksdb.ColumnFamilyHandle;
import org.rocksdb.ColumnFamilyOptions;
import org.rocksdb.DBOptions;
import org.rocksdb.LRUCache;
import org.rocksdb.OptimisticTransactionDB;
import org.rocksdb.Options;
import org.rocksdb.RocksDB;
import org.rocksdb.RocksDBException;
import org.rocksdb.TransactionDB;
import org.rocksdb.TransactionDBOptions;
import org.rocksdb.TtlDB;

/**
 * The static opens of {@code RocksDB} and its subclasses, each giving the default column family a
 * table configuration, and the fetch of a family's options as Flink does it. Uses only API that
 * rocksdbjni 10 and frocksdbjni 6.20 and 8.10 share.
 */
public final class DatabaseOpens {
  private DatabaseOpens() {}

  /**
   * An open with a cache of {@code capacity} in its default family's table configuration, the fetch
   * of family options, then the close of everything else (and of the fetched options first if
   * {@code closeFetched}). Returns what was fetched.
   */
  @FunctionalInterface
  public interface Retention {
    List<Fetched> fetch(long capacity, String path, boolean closeFetched) throws Exception;
  }

  /** An open taking one {@code Options}; {@code resources} are closed after the database. */
  @FunctionalInterface
  private interface WithOptions {
    RocksDB open(Options options, String path, List<AutoCloseable> resources)
        throws RocksDBException;
  }

  /** An open taking column family descriptors and filling {@code handles}. */
  @FunctionalInterface
  private interface WithFamilies {
    RocksDB open(
        DBOptions options,
        String path,
        List<ColumnFamilyDescriptor> families,
        List<ColumnFamilyHandle> handles,
        List<AutoCloseable> resources)
        throws RocksDBException;
  }

  /** Options fetched from a family handle, with the source line of the fetch. */
  public record Fetched(ColumnFamilyOptions options, int line) {}

  /**
   * Every open, keyed {@code options:<open>} (one retaining fetch: the default family) or {@code
   * families:<open>} (two: the default descriptor's handle and {@code getDefaultColumnFamily()}).
   */
  public static Map<String, Retention> retentions() {
    Map<String, Retention> all = new LinkedHashMap<>();
    withOptions()
        .forEach(
            (name, open) ->
                all.put(
                    "options:" + name,
                    (capacity, path, close) ->
                        fetchThroughDefaultFamily(open, capacity, path, close)));
    withFamilies()
        .forEach(
            (name, open) ->
                all.put(
                    "families:" + name,
                    (capacity, path, close) -> fetchThroughFamilies(open, capacity, path, close)));
    return all;
  }

  private static Map<String, WithOptions> withOptions() {
    Map<String, WithOptions> opens = new LinkedHashMap<>();
    opens.put("RocksDB.open", (options, path, resources) -> RocksDB.open(options, path));
    opens.put(
        "RocksDB.openReadOnly",
        (options, path, resources) -> {
          create(path);
          return RocksDB.openReadOnly(options, path);
        });
    opens.put(
        "RocksDB.openAsSecondary",
        (options, path, resources) -> {
          create(path);
          return RocksDB.openAsSecondary(options, path, path + "-secondary");
        });
    opens.put("TtlDB.open", (options, path, resources) -> TtlDB.open(options, path));
    opens.put(
        "TransactionDB.open",
        (options, path, resources) ->
            TransactionDB.open(options, transactionOptions(resources), path));
    opens.put(
        "OptimisticTransactionDB.open",
        (options, path, resources) -> OptimisticTransactionDB.open(options, path));
    return opens;
  }

  private static Map<String, WithFamilies> withFamilies() {
    Map<String, WithFamilies> opens = new LinkedHashMap<>();
    opens.put(
        "RocksDB.open",
        (options, path, families, handles, resources) ->
            RocksDB.open(options, path, families, handles));
    opens.put(
        "RocksDB.openReadOnly",
        (options, path, families, handles, resources) -> {
          create(path);
          return RocksDB.openReadOnly(options, path, families, handles);
        });
    opens.put(
        "TtlDB.open",
        (options, path, families, handles, resources) ->
            TtlDB.open(
                options,
                path,
                families,
                handles,
                new ArrayList<>(Collections.nCopies(families.size(), 0)),
                false));
    opens.put(
        "TransactionDB.open",
        (options, path, families, handles, resources) ->
            TransactionDB.open(options, transactionOptions(resources), path, families, handles));
    opens.put(
        "OptimisticTransactionDB.open",
        (options, path, families, handles, resources) ->
            OptimisticTransactionDB.open(options, path, families, handles));
    return opens;
  }

  /** Options whose table configuration shares {@code cache}. */
  private static Options optionsSharing(Cache cache) {
    return new Options()
        .setCreateIfMissing(true)
        .setTableFormatConfig(new BlockBasedTableConfig().setBlockCache(cache));
  }

  /** Column family options whose table configuration shares {@code cache}. */
  public static ColumnFamilyOptions familyOptionsSharing(Cache cache) {
    return new ColumnFamilyOptions()
        .setTableFormatConfig(new BlockBasedTableConfig().setBlockCache(cache));
  }

  /**
   * {@code db.getDefaultColumnFamily().getDescriptor().getOptions()}, or null where the database
   * keeps no default family handle (frocksdbjni 8.10's {@code TtlDB}, and its {@code
   * OptimisticTransactionDB} opened with one Options).
   */
  private static Fetched defaultFamilyOptions(RocksDB db) throws RocksDBException {
    ColumnFamilyHandle handle = db.getDefaultColumnFamily();
    if (handle == null) {
      return null;
    }
    int line = here() + 1;
    return new Fetched(handle.getDescriptor().getOptions(), line);
  }

  /** {@code handle.getDescriptor().getOptions()}. */
  public static Fetched familyOptions(ColumnFamilyHandle handle) throws RocksDBException {
    int line = here() + 1;
    return new Fetched(handle.getDescriptor().getOptions(), line);
  }

  /**
   * Opens with Options sharing a new cache of {@code capacity} and fetches the default family's
   * options, then closes everything else: the cache, closed in Java, is held by those options,
   * unless {@code closeFetched} closed them first. Empty if the database has no default family
   * handle.
   */
  private static List<Fetched> fetchThroughDefaultFamily(
      WithOptions open, long capacity, String path, boolean closeFetched) throws Exception {
    LRUCache cache = new LRUCache(capacity);
    Options options = optionsSharing(cache);
    List<AutoCloseable> resources = new ArrayList<>();
    try (RocksDB db = open.open(options, path, resources)) {
      return present(closeFetched, defaultFamilyOptions(db));
    } finally {
      closeAll(resources);
      options.close();
      cache.close();
    }
  }

  /**
   * The same through descriptors: the default descriptor's options share the cache; returns the
   * options fetched from its handle and from {@code getDefaultColumnFamily()} (if there is one).
   */
  private static List<Fetched> fetchThroughFamilies(
      WithFamilies open, long capacity, String path, boolean closeFetched) throws Exception {
    LRUCache cache = new LRUCache(capacity);
    ColumnFamilyOptions columnOptions = familyOptionsSharing(cache);
    List<ColumnFamilyHandle> handles = new ArrayList<>();
    List<AutoCloseable> resources = new ArrayList<>();
    try (DBOptions options = new DBOptions().setCreateIfMissing(true);
        RocksDB db =
            open.open(
                options,
                path,
                List.of(new ColumnFamilyDescriptor(RocksDB.DEFAULT_COLUMN_FAMILY, columnOptions)),
                handles,
                resources)) {
      List<Fetched> fetched =
          present(closeFetched, familyOptions(handles.get(0)), defaultFamilyOptions(db));
      handles.forEach(ColumnFamilyHandle::close);
      return fetched;
    } finally {
      closeAll(resources);
      columnOptions.close();
      cache.close();
    }
  }

  /** The fetched options that exist, closed already if {@code close}. */
  private static List<Fetched> present(boolean close, Fetched... fetched) {
    List<Fetched> found = new ArrayList<>();
    for (Fetched f : fetched) {
      if (f != null) {
        if (close) {
          f.options().close();
        }
        found.add(f);
      }
    }
    return found;
  }

  /** Closes {@code resources}, last first. */
  private static void closeAll(List<AutoCloseable> resources) throws Exception {
    for (int i = resources.size() - 1; i >= 0; i--) {
      resources.get(i).close();
    }
    resources.clear();
  }

  private static TransactionDBOptions transactionOptions(List<AutoCloseable> resources) {
    TransactionDBOptions options = new TransactionDBOptions();
    resources.add(options);
    return options;
  }

  /** Creates an empty database at {@code path}, for the opens that need one. */
  private static void create(String path) throws RocksDBException {
    try (Options options = new Options().setCreateIfMissing(true);
        RocksDB db = RocksDB.open(options, path)) {
      db.put("k".getBytes(), "v".getBytes());
    }
  }
}
