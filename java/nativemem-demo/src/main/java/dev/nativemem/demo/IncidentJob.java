package dev.nativemem.demo;

import dev.nativemem.handles.HandleReport;
import dev.nativemem.handles.HandleScope;
import dev.nativemem.handles.KnownLeak;
import dev.nativemem.handles.NativeHandles;
import dev.nativemem.internal.ByteFormat;
import java.io.IOException;
import java.io.InputStream;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.jar.JarEntry;
import java.util.jar.JarOutputStream;
import org.rocksdb.BlockBasedTableConfig;
import org.rocksdb.ColumnFamilyDescriptor;
import org.rocksdb.ColumnFamilyHandle;
import org.rocksdb.ColumnFamilyOptions;
import org.rocksdb.DBOptions;
import org.rocksdb.LRUCache;
import org.rocksdb.RocksDB;
import org.rocksdb.Statistics;

/**
 * The incidents themselves. Loaded by {@link HandlesDemo} through a class loader that sees the
 * application's RocksDB: with the agent, nativemem's own classes live on the boot class path, which
 * cannot see {@code org.rocksdb}.
 */
public final class IncidentJob {
  private static final int RESTARTS = 3;
  private static final long CACHE_BYTES = 32L << 20;

  private IncidentJob() {}

  public static void main(String[] args) {
    incidents();
  }

  private static void incidents() {
    Path dir = null;
    try {
      dir = Files.createTempDirectory("nativemem-demo");
      Path resources = resourceJar(dir);
      RocksDB.loadLibrary();
      System.out.println();
      System.out.println(
          "As shipped: fetched options, Statistics and resource streams never closed");
      try (HandleScope scope = NativeHandles.scope("as shipped")) {
        for (int restart = 0; restart < RESTARTS; restart++) {
          keyedBackend(dir.resolve("leaky-" + restart), false);
          readResource(resources, false);
        }
        String failure = scope.check(KnownLeak.ROCKSDB_DEFAULT_READ_OPTIONS);
        System.out.println(failure == null ? "  no leak found" : indent(failure));
      }
      HandleReport report = NativeHandles.report();
      long zombieBytes = 0;
      for (HandleReport.ZombieCache zombie : report.zombieCaches()) {
        zombieBytes += zombie.capacityBytes();
      }
      System.out.println(indent(report.toString()));
      System.out.println(
          "  => "
              + report.zombieCaches().size()
              + " block caches closed in Java but alive natively: "
              + ByteFormat.human(zombieBytes)
              + " of capacity no metric shows");

      System.out.println();
      System.out.println("Fixed: every handle closed (try-with-resources)");
      try (HandleScope scope = NativeHandles.scope("fixed")) {
        for (int restart = 0; restart < RESTARTS; restart++) {
          keyedBackend(dir.resolve("fixed-" + restart), true);
          readResource(resources, true);
        }
        String failure = scope.check(KnownLeak.ROCKSDB_DEFAULT_READ_OPTIONS);
        System.out.println(
            failure == null
                ? "  no leak: "
                    + scope
                    + "; zombie caches still "
                    + report.zombieCaches().size()
                    + " (from the run above), none added"
                : indent(failure));
      }
      System.out.println(
          "  (RocksDB's own defaultReadOptions_ is a known upstream leak, facebook/rocksdb#15036:"
              + " reported as known, not failed)");
    } catch (Exception e) {
      System.out.println("  demo failed: " + e);
    } finally {
      if (dir != null) {
        dev.nativemem.internal.FileTrees.deleteQuietly(dir);
      }
    }
  }

  /** One keyed backend's life: shared cache, a database, its descriptor read back. */
  private static void keyedBackend(Path path, boolean fixed) throws Exception {
    LRUCache cache = new LRUCache(CACHE_BYTES);
    ColumnFamilyOptions columnOptions =
        new ColumnFamilyOptions()
            .setTableFormatConfig(new BlockBasedTableConfig().setBlockCache(cache));
    Statistics statistics = new Statistics();
    List<ColumnFamilyHandle> handles = new ArrayList<>();
    try (DBOptions options = new DBOptions().setCreateIfMissing(true).setStatistics(statistics);
        RocksDB db =
            RocksDB.open(
                options,
                path.toString(),
                List.of(new ColumnFamilyDescriptor(RocksDB.DEFAULT_COLUMN_FAMILY, columnOptions)),
                handles)) {
      db.put("job".getBytes(), "state".getBytes());
      ColumnFamilyOptions fetched = handles.get(0).getDescriptor().getOptions();
      if (fixed) {
        fetched.close();
      }
      for (ColumnFamilyHandle handle : handles) {
        handle.close();
      }
    }
    if (fixed) {
      statistics.close();
    }
    columnOptions.close();
    cache.close();
  }

  /** A job class loader reading a resource from its jar. */
  private static void readResource(Path jar, boolean fixed) throws IOException {
    URLClassLoader loader = new URLClassLoader(new URL[] {jar.toUri().toURL()}, null);
    if (fixed) {
      try (URLClassLoader closing = loader;
          InputStream in = closing.getResourceAsStream("job.conf")) {
        in.read();
      }
    } else {
      InputStream in = loader.getResourceAsStream("job.conf");
      in.read();
      LEAKED_STREAMS.add(in); // a stream someone keeps but never closes
    }
  }

  private static final List<InputStream> LEAKED_STREAMS = new ArrayList<>();

  private static Path resourceJar(Path dir) throws IOException {
    Path jar = dir.resolve("job.jar");
    try (JarOutputStream out = new JarOutputStream(Files.newOutputStream(jar))) {
      out.putNextEntry(new JarEntry("job.conf"));
      out.write(new byte[256 * 1024]);
      out.closeEntry();
    }
    return jar;
  }

  private static String indent(String text) {
    return "  " + text.trim().replace("\n", "\n  ");
  }
}
