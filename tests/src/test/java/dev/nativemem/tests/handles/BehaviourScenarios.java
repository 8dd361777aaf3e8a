package dev.nativemem.tests.handles;

import static dev.nativemem.tests.handles.SourceLine.here;

import dev.nativemem.handles.HandleReport;
import dev.nativemem.handles.HandleScope;
import dev.nativemem.handles.KnownLeak;
import dev.nativemem.handles.NativeHandles;
import java.io.File;
import java.io.InputStream;
import java.lang.ref.Cleaner;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.jar.JarEntry;
import java.util.jar.JarOutputStream;
import java.util.zip.CRC32;
import java.util.zip.Inflater;
import java.util.zip.ZipEntry;
import org.rocksdb.BlockBasedTableConfig;
import org.rocksdb.ColumnFamilyOptions;
import org.rocksdb.LRUCache;
import org.rocksdb.Options;
import org.rocksdb.OwnSuiteProbe;
import org.rocksdb.RocksDB;
import org.springframework.boot.loader.jar.NestedJarFile;

/**
 * Programs for {@link TrackerBehaviourTest}, each run in a child JVM with the agent: each plants
 * handles of known count and line and prints {@code key value} lines.
 */
public final class BehaviourScenarios {
  static final int STREAMS = 30;
  static final int DROPPED = 25;

  private BehaviourScenarios() {}

  public static void main(String[] args) throws Exception {
    RocksDB.loadLibrary();
    switch (args[0]) {
      case "frames":
        frames();
        break;
      case "kinds":
        kinds(Files.createTempDirectory("kinds"));
        break;
      case "spring-pool":
        springPool(Files.createTempDirectory("spring-pool"));
        break;
      case "jdk-pool":
        jdkPool(Files.createTempDirectory("jdk-pool"));
        break;
      case "cleaner":
        cleaner();
        break;
      case "finalizer":
        finalizer();
        break;
      case "run-finalization":
        runFinalization();
        break;
      case "owns-nothing":
        ownsNothing(Files.createTempDirectory("owns-nothing"));
        break;
      case "test-scope":
        testScope();
        break;
      default:
        throw new IllegalArgumentException(args[0]);
    }
  }

  /** Skipped by the agent's {@code skip} option: a wrapper that is not where handles are made. */
  public static final class Wrapper {
    private Wrapper() {}

    static ColumnFamilyOptions newOptions() {
      return new ColumnFamilyOptions();
    }
  }

  /** Class loaders are infrastructure: a handle made in one is blamed on who asked for it. */
  static final class HandleMakingLoader extends ClassLoader {
    static ColumnFamilyOptions newOptions() {
      return new ColumnFamilyOptions();
    }
  }

  static void frames() {
    try (HandleScope scope = NativeHandles.scope("frames")) {
      System.out.println("wrapper_line " + (here() + 1));
      Wrapper.newOptions();
      System.out.println("loader_line " + (here() + 1));
      HandleMakingLoader.newOptions();
      System.out.println("rocksdb_test_line " + OwnSuiteProbe.leak());
      System.out.println("failure " + scope.check().replace("\n", " | "));
    }
  }

  /** A subclass from outside RocksDB, as Kafka Streams' options adapter. */
  public static final class AdapterOptions extends Options {}

  static void kinds(Path dir) throws Exception {
    try (HandleScope scope = NativeHandles.scope("kinds")) {
      for (int i = 0; i < 3; i++) {
        new AdapterOptions();
      }
      new Options().close();
      try (Options options = new Options().setCreateIfMissing(true);
          RocksDB db = RocksDB.open(options, dir.toString())) {
        db.put(new byte[] {1}, new byte[] {2});
      }
      System.out.println("scope_leaked " + scope.check(KnownLeak.ROCKSDB_DEFAULT_READ_OPTIONS));
    }
    HandleReport report = NativeHandles.report();
    HandleReport.KindCount options = report.kind("Options");
    System.out.println(
        "options " + options.created() + " " + options.leaked() + " " + options.classes());
    for (HandleReport.Site site : report.sites()) {
      if (site.kind().equals("ReadOptions")) {
        System.out.println("read_options_known " + site.knownLeak());
      }
    }
    System.out.println("text " + report.toString().replace("\n", " | "));
    System.out.println("json " + report.toJson());
  }

  /** A jar with one deflated 64 KiB entry, {@code data.txt}. */
  public static Path jarWithResource(Path dir) throws Exception {
    Path jar = dir.resolve("resources.jar");
    try (JarOutputStream out = new JarOutputStream(Files.newOutputStream(jar))) {
      out.putNextEntry(new JarEntry("data.txt"));
      out.write(new byte[64 * 1024]);
      out.closeEntry();
    }
    return jar;
  }

  private static HandleReport.Site pooledBy(HandleReport report, String pool) {
    for (HandleReport.Site site : report.sites()) {
      if (site.stack().contains("(pooled by " + pool + ")")) {
        return site;
      }
    }
    return null;
  }

  private static long pooledCount(HandleReport report, String pool) {
    HandleReport.Site site = pooledBy(report, pool);
    return site == null ? 0 : site.pooled();
  }

  private static long openAtLine(HandleReport report, String file, int line) {
    long open = 0;
    for (HandleReport.Site site : report.sites()) {
      if (site.kind().equals("Inflater")
          && site.createdAt() != null
          && site.createdAt().endsWith("(" + file + ":" + line + ")")) {
        open += site.open();
      }
    }
    return open;
  }

  private static final String NESTED = "BOOT-INF/lib/resources.jar";

  /**
   * A jar holding {@code inner} stored (not compressed), as Spring Boot's fat jars hold libraries.
   */
  static Path fatJar(Path dir, Path inner) throws Exception {
    byte[] bytes = Files.readAllBytes(inner);
    CRC32 crc = new CRC32();
    crc.update(bytes);
    JarEntry entry = new JarEntry(NESTED);
    entry.setMethod(ZipEntry.STORED);
    entry.setSize(bytes.length);
    entry.setCompressedSize(bytes.length);
    entry.setCrc(crc.getValue());
    Path jar = dir.resolve("app.jar");
    try (JarOutputStream out = new JarOutputStream(Files.newOutputStream(jar))) {
      out.putNextEntry(entry);
      out.write(bytes);
      out.closeEntry();
    }
    return jar;
  }

  /**
   * Spring Boot's nested-jar loader: streams left open, then closed (their Inflaters go back to its
   * pool), then streams dropped unclosed (ended, or pooled, by Spring's own Cleaner thread).
   */
  static void springPool(Path dir) throws Exception {
    File file = fatJar(dir, jarWithResource(dir)).toFile();
    String pool = "org.springframework.boot.loader.jar.NestedJarFileResources";
    try (NestedJarFile jar = new NestedJarFile(file, NESTED)) {
      JarEntry entry = jar.getJarEntry("data.txt");
      try (HandleScope scope = NativeHandles.scope("spring")) {
        List<InputStream> streams = new ArrayList<>();
        int line = -1;
        for (int i = 0; i < STREAMS; i++) {
          line = here() + 1;
          InputStream in = jar.getInputStream(entry);
          in.read();
          streams.add(in);
        }
        System.out.println("open_line " + line);
        System.out.println("open_at_line " + openAtLine(NativeHandles.report(), file(), line));
        String failure = scope.check();
        System.out.println("open_failure " + failure.split("\n")[1]);
        for (InputStream in : streams) {
          in.close();
        }
        System.out.println("closed_failure " + scope.check());
        HandleReport report = NativeHandles.report();
        HandleReport.Site pooled = pooledBy(report, pool);
        System.out.println("pooled " + (pooled == null ? 0 : pooled.pooled()));
        System.out.println("open_after_close " + openAtLine(report, file(), line));
        System.out.println("inflater " + counts(report.kind("Inflater")));
      }
      try (HandleScope scope = NativeHandles.scope("spring-dropped")) {
        for (int i = 0; i < DROPPED; i++) {
          jar.getInputStream(entry).read();
        }
        // Spring's cleaner runs on its own thread, after the collector: the check cannot wait for
        // it (the Inflater stays reachable from the cleaner until it runs), so poll.
        awaitLeaks(scope, DROPPED);
        System.out.println("dropped_scope " + scope.leaked() + " " + scope.open());
        System.out.println(
            "inflater_after_drop " + counts(NativeHandles.report().kind("Inflater")));
      }
    }
  }

  /** Collects garbage until {@code scope} counts {@code leaks} leaks, for at most 10 s. */
  private static void awaitLeaks(HandleScope scope, long leaks) throws InterruptedException {
    scope.check();
    for (int i = 0; i < 500 && scope.leaked() < leaks; i++) {
      System.gc();
      Thread.sleep(20);
    }
  }

  private static String counts(HandleReport.KindCount kind) {
    return kind.created()
        + " "
        + kind.closed()
        + " "
        + kind.leaked()
        + " "
        + kind.open()
        + " "
        + kind.pooled();
  }

  private static String file() {
    return BehaviourScenarios.class.getSimpleName() + ".java";
  }

  /**
   * The JDK's own cache of a jar's Inflaters: a closed stream's Inflater is pooled by the zip file,
   * not open at the line that read; and an application pool reported through the extension point.
   */
  static void jdkPool(Path dir) throws Exception {
    Path jar = jarWithResource(dir);
    int line;
    try (URLClassLoader loader = new URLClassLoader(new URL[] {jar.toUri().toURL()}, null)) {
      // The class path's jars are read through the same cache: some are pooled already.
      long before = pooledCount(NativeHandles.report(), "java.util.zip.ZipFile");
      line = here() + 1;
      try (InputStream in = loader.getResourceAsStream("data.txt")) {
        in.readAllBytes();
      }
      HandleReport report = NativeHandles.report();
      long after = pooledCount(report, "java.util.zip.ZipFile");
      System.out.println("jdk_pooled " + (after - before));
      System.out.println("open_at_read_line " + openAtLine(report, file(), line));
    }
    try (HandleScope scope = NativeHandles.scope("own-pool")) {
      Inflater inflater = new Inflater();
      NativeHandles.pooled(inflater, "com.example.InflaterPool");
      HandleReport report = NativeHandles.report();
      System.out.println("own_pooled " + pooledBy(report, "com.example.InflaterPool").pooled());
      System.out.println("own_pool_scope " + scope.check());
      int borrowLine = here() + 1;
      NativeHandles.borrowed(inflater);
      System.out.println("borrowed_open " + openAtLine(NativeHandles.report(), file(), borrowLine));
      inflater.end();
    }
  }

  /**
   * Inflaters ended by a Cleaner of the application's own (not the JDK's "Common-Cleaner" thread)
   * and by the common cleaner: both leaks, whoever runs the cleaner.
   */
  static void cleaner() throws Exception {
    Cleaner own = Cleaner.create();
    try (HandleScope scope = NativeHandles.scope("cleaner")) {
      for (int i = 0; i < 3; i++) {
        Inflater inflater = new Inflater();
        own.register(new Object(), inflater::end); // owner unreachable at once
      }
      for (int i = 0; i < 2; i++) {
        new Inflater(); // dropped: the common cleaner ends it
      }
      new Inflater().end();
      awaitLeaks(scope, 5);
      System.out.println("cleaner " + scope.leaked() + " " + scope.closed() + " " + scope.open());
    }
  }

  /**
   * Options that retain a closed cache, leaked; then a finalizer (frocksdbjni 6.20) closes them,
   * which frees the native options and the cache with them.
   */
  static void finalizer() throws Exception {
    LRUCache cache = new LRUCache(16L << 20);
    System.out.println("leak_line " + (here() + 1));
    new ColumnFamilyOptions()
        .setTableFormatConfig(new BlockBasedTableConfig().setBlockCache(cache));
    cache.close();
    try (HandleScope scope = NativeHandles.scope("collect")) {
      scope.check(); // collects the options: leaked, retaining the cache
    }
    HandleReport before = NativeHandles.report();
    System.out.println("zombie_before " + before.zombieCacheCapacityBytes());
    for (int i = 0; i < 20; i++) {
      System.gc();
      System.runFinalization();
      Thread.sleep(20);
    }
    HandleReport after = NativeHandles.report();
    System.out.println("zombie_after " + after.zombieCacheCapacityBytes());
    for (HandleReport.Site site : after.sites()) {
      if (site.kind().equals("ColumnFamilyOptions")) {
        System.out.println(
            "options_site "
                + site.leaked()
                + " "
                + site.freedByFinalizer()
                + " "
                + site.headline());
      }
    }
    System.out.println("json " + after.toJson());
  }

  /**
   * Options dropped unclosed, then finalized by {@code System.runFinalization}, whose finalizer
   * runs on a thread of its own before the tracker saw the collection: still leaks, as Flink 1.x
   * jobs do at exit.
   */
  static void runFinalization() throws Exception {
    for (int i = 0; i < RUN_FINALIZATION_LEAKS; i++) {
      new ColumnFamilyOptions();
    }
    for (int i = 0; i < 20; i++) {
      System.gc();
      System.runFinalization();
      Thread.sleep(20);
    }
    HandleReport report = NativeHandles.report();
    System.out.println("options " + counts(report.kind("ColumnFamilyOptions")));
    for (HandleReport.Site site : report.sites()) {
      if (site.kind().equals("ColumnFamilyOptions")) {
        System.out.println("freed_by_finalizer " + site.freedByFinalizer());
      }
    }
  }

  static final int RUN_FINALIZATION_LEAKS = 20;

  /** {@code PerfContext} owns nothing (its dispose is empty): never tracked, never a leak. */
  static void ownsNothing(Path dir) throws Exception {
    try (HandleScope scope = NativeHandles.scope("perf-context")) {
      try (Options options = new Options().setCreateIfMissing(true);
          RocksDB db = RocksDB.open(options, dir.toString())) {
        for (int i = 0; i < 3; i++) {
          db.getPerfContext();
        }
        db.put(new byte[] {1}, new byte[] {2});
      }
      System.out.println("failure " + scope.check(KnownLeak.ROCKSDB_DEFAULT_READ_OPTIONS));
    }
    System.out.println(
        "perf_context_created " + NativeHandles.report().kind("PerfContext").created());
  }

  /** A test's scope records every creation site, whatever the agent's level. */
  static void testScope() throws Exception {
    try (HandleScope scope = NativeHandles.testScope("test")) {
      int line = -1;
      for (int i = 0; i < 2; i++) {
        line = here() + 1;
        new ColumnFamilyOptions();
      }
      System.out.println("line " + line);
      Inflater open = new Inflater();
      System.out.println("inflater_line " + (here() - 1));
      System.out.println("failure " + scope.check().replace("\n", " | "));
      open.end();
    }
    try (HandleScope plain = NativeHandles.scope("plain")) {
      new ColumnFamilyOptions();
      System.out.println("plain_failure " + plain.check().replace("\n", " | "));
    }
  }
}
