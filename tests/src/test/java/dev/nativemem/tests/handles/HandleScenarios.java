package dev.nativemem.tests.handles;

import static dev.nativemem.tests.handles.SourceLine.here;

import dev.nativemem.handles.HandleReport;
import dev.nativemem.handles.HandleScope;
import dev.nativemem.handles.KnownLeak;
import dev.nativemem.handles.NativeHandles;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import org.rocksdb.BlockBasedTableConfig;
import org.rocksdb.ColumnFamilyDescriptor;
import org.rocksdb.ColumnFamilyHandle;
import org.rocksdb.ColumnFamilyOptions;
import org.rocksdb.DBOptions;
import org.rocksdb.FlushOptions;
import org.rocksdb.LRUCache;
import org.rocksdb.Options;
import org.rocksdb.RocksDB;
import org.rocksdb.RocksIterator;

/**
 * Programs the forked-JVM tests run: each prints {@code key value} lines. Uses only RocksDB API
 * that rocksdbjni 10 and frocksdbjni 6.20 and 8.10 share.
 */
public final class HandleScenarios {
  private HandleScenarios() {}

  public static void main(String[] args) throws Exception {
    RocksDB.loadLibrary();
    switch (args[0]) {
      case "workload":
        workload(Files.createTempDirectory("workload"));
        break;
      case "leaks":
        leaks(Integer.parseInt(args[1]), Files.createTempDirectory("leaks"));
        break;
      case "default-family":
        defaultFamily(Files.createTempDirectory("default-family"));
        break;
      case "late-attach":
        lateAttach(args[1]);
        break;
      case "churn":
        churn(Integer.parseInt(args[1]), Integer.parseInt(args[2]));
        break;
      case "rare-among-hot":
        rareAmongHot(Integer.parseInt(args[1]), Integer.parseInt(args[2]));
        break;
      case "zip-counts":
        zipCounts(Integer.parseInt(args[1]), Integer.parseInt(args[2]));
        break;
      default:
        throw new IllegalArgumentException(args[0]);
    }
  }

  /** Open, put, get, iterate, compact, close: prints a digest of everything read back. */
  static void workload(Path dir) throws Exception {
    MessageDigest digest = MessageDigest.getInstance("SHA-256");
    try (Options options = new Options().setCreateIfMissing(true);
        RocksDB db = RocksDB.open(options, dir.toString())) {
      for (int i = 0; i < 2000; i++) {
        db.put(("key" + i).getBytes(), ("value" + (i * 31 % 997)).getBytes());
      }
      for (int i = 0; i < 2000; i += 7) {
        db.delete(("key" + i).getBytes());
      }
      try (FlushOptions flush = new FlushOptions().setWaitForFlush(true)) {
        db.flush(flush);
      }
      db.compactRange();
      for (int i = 0; i < 2000; i += 13) {
        byte[] value = db.get(("key" + i).getBytes());
        digest.update(value == null ? new byte[] {0} : value);
      }
      int count = 0;
      try (RocksIterator it = db.newIterator()) {
        for (it.seekToFirst(); it.isValid(); it.next()) {
          digest.update(it.key());
          digest.update(it.value());
          count++;
        }
      }
      System.out.println("count " + count);
      System.out.println("keys " + db.getProperty("rocksdb.estimate-num-keys"));
    }
    System.out.println("digest " + HexFormat.of().formatHex(digest.digest()));
  }

  /** N leaked ColumnFamilyOptions, and a zombie cache held by fetched options. */
  static void leaks(int n, Path dir) throws Exception {
    try (HandleScope scope = NativeHandles.scope("leaks")) {
      int line = -1;
      for (int i = 0; i < n; i++) {
        line = here() + 1;
        new ColumnFamilyOptions();
      }
      System.out.println("leak_line " + line);
      LRUCache cache = new LRUCache(24L << 20);
      ColumnFamilyOptions columnOptions =
          new ColumnFamilyOptions()
              .setTableFormatConfig(new BlockBasedTableConfig().setBlockCache(cache));
      List<ColumnFamilyHandle> handles = new ArrayList<>();
      ColumnFamilyOptions fetched;
      try (DBOptions options = new DBOptions().setCreateIfMissing(true);
          RocksDB db =
              RocksDB.open(
                  options,
                  dir.toString(),
                  List.of(new ColumnFamilyDescriptor(RocksDB.DEFAULT_COLUMN_FAMILY, columnOptions)),
                  handles)) {
        System.out.println("retain_line " + (here() + 1));
        fetched = handles.get(0).getDescriptor().getOptions();
        for (ColumnFamilyHandle handle : handles) {
          handle.close();
        }
      }
      columnOptions.close();
      cache.close();
      String failure = scope.check(KnownLeak.ROCKSDB_DEFAULT_READ_OPTIONS);
      System.out.println(
          "failure_first_line " + (failure == null ? "none" : failure.split("\n")[0]));
      HandleReport report = NativeHandles.report();
      System.out.println("leaked_options " + report.kind("ColumnFamilyOptions").leaked());
      System.out.println("zombies " + report.zombieCaches().size());
      for (HandleReport.ZombieCache zombie : report.zombieCaches()) {
        System.out.println("zombie_capacity " + zombie.capacityBytes());
        System.out.println(
            "zombie_retainer " + zombie.retainers().get(0).stack().replace("\n", " | "));
      }
      System.out.println("fetched_alive " + (fetched != null));
      System.out.println("report_json " + report.toJson());
    }
  }

  /**
   * Each open of {@link DatabaseOpens}, with a cache of its own capacity left to the fetched
   * options: prints {@code <open> <retainers found>/<fetched>}, {@code none} (no zombie) or {@code
   * unreachable} (no family handle to fetch from).
   */
  static void defaultFamily(Path dir) throws Exception {
    long capacity = 8L << 20;
    for (Map.Entry<String, DatabaseOpens.Retention> open : DatabaseOpens.retentions().entrySet()) {
      capacity += 1L << 20;
      String path = dir.resolve(open.getKey().replace(':', '-')).toString();
      printRetention(open.getKey(), capacity, open.getValue().fetch(capacity, path, false));
    }
  }

  private static void printRetention(
      String key, long capacity, List<DatabaseOpens.Fetched> fetched) {
    String found = fetched.isEmpty() ? "unreachable" : "none";
    for (HandleReport.ZombieCache zombie : NativeHandles.report().zombieCaches()) {
      if (zombie.capacityBytes() == capacity) {
        long lines =
            fetched.stream()
                .filter(
                    f ->
                        zombie.retainers().stream()
                            .anyMatch(
                                r -> r.stack().contains("(DatabaseOpens.java:" + f.line() + ")")))
                .count();
        found = lines + "/" + fetched.size();
      }
    }
    System.out.println(key + " " + found);
    fetched.forEach(f -> f.options().close());
  }

  /**
   * Attaches the agent to this running JVM after RocksDB and zlib classes are in use: they are
   * retransformed, handles made before stay untracked, handles made after are tracked. Touches no
   * nativemem class before the attach (they would be loaded twice).
   */
  static void lateAttach(String jar) throws Exception {
    List<Object> early = new ArrayList<>();
    for (int i = 0; i < 2; i++) {
      early.add(new ColumnFamilyOptions());
    }
    early.add(new java.util.zip.Inflater());
    com.sun.tools.attach.VirtualMachine vm =
        com.sun.tools.attach.VirtualMachine.attach(String.valueOf(ProcessHandle.current().pid()));
    try {
      vm.loadAgent(jar, "level=full");
    } finally {
      vm.detach();
    }
    System.out.println("active " + NativeHandles.agentActive());
    try (HandleScope scope = NativeHandles.scope("late")) {
      int line = -1;
      for (int i = 0; i < 3; i++) {
        line = here() + 1;
        new ColumnFamilyOptions();
      }
      new java.util.zip.Inflater();
      String failure = scope.check();
      System.out.println("leak_line " + line);
      System.out.println("failure " + failure.replace("\n", " | "));
    }
    HandleReport report = NativeHandles.report();
    System.out.println(
        "options "
            + report.kind("ColumnFamilyOptions").created()
            + " "
            + report.kind("ColumnFamilyOptions").leaked());
    System.out.println("inflaters_leaked " + report.kind("Inflater").leaked());
    // Ended after the attach, created before it: neither created nor closed in the books.
    ((java.util.zip.Inflater) early.get(2)).end();
    System.out.println("inflaters_closed " + NativeHandles.report().kind("Inflater").closed());
    System.out.println("early " + early.size());
  }

  static final int ZIP_OPEN = 7;
  static final int ZIP_LEAKED = 5;

  /**
   * Outside any scope, so most streams are only counted: {@code threads} threads each end {@code
   * cycles} Inflaters and Deflaters, then {@link #ZIP_OPEN} Inflaters stay open and {@link
   * #ZIP_LEAKED} Deflaters are left to the garbage collector. Prints the change of each kind's
   * counts: created closed open leaked pooled (a class loaded from a jar meanwhile borrows an
   * Inflater from the jar's pool, a new one if the pool is empty).
   */
  /**
   * On one thread, {@code rare} ColumnFamilyOptions leaked at one line, a few a second, each among
   * {@code hot} ReadOptions created and closed: prints the line, and the leaked options the report
   * puts at that line and in all, once the collector has found them all (10 s at most).
   */
  static void rareAmongHot(int rare, int hot) throws Exception {
    int line = -1;
    for (int round = 0; round < rare; round++) {
      for (int i = 0; i < hot; i++) {
        new org.rocksdb.ReadOptions().close();
      }
      line = here() + 1;
      new ColumnFamilyOptions(); // the rare leak
      Thread.sleep(300);
    }
    System.out.println("rare_line " + line);
    String at = "HandleScenarios.rareAmongHot(HandleScenarios.java:" + line + ")";
    long atLine = 0;
    long leaked = 0;
    for (long end = System.nanoTime() + 10_000_000_000L; System.nanoTime() < end; ) {
      System.gc();
      Thread.sleep(100);
      HandleReport report = NativeHandles.report();
      leaked = 0;
      for (HandleReport.KindCount kind : report.kinds()) {
        if (kind.kind().equals("ColumnFamilyOptions")) {
          leaked = kind.leaked();
        }
      }
      atLine = 0;
      for (HandleReport.Site site : report.sites()) {
        if (site.kind().equals("ColumnFamilyOptions") && site.stack().contains(at)) {
          atLine += site.leaked();
        }
      }
      if (leaked >= rare) {
        break;
      }
    }
    System.out.println("rare_leaked " + leaked);
    System.out.println("rare_leaked_at_line " + atLine);
  }

  static void zipCounts(int threads, int cycles) throws Exception {
    zipChurn(threads, 100); // warm up: classes loaded, nothing left open
    HandleReport before = NativeHandles.report();
    zipChurn(threads, cycles);
    List<java.util.zip.Inflater> open = new ArrayList<>();
    for (int i = 0; i < ZIP_OPEN; i++) {
      open.add(new java.util.zip.Inflater());
    }
    for (int i = 0; i < ZIP_LEAKED; i++) {
      new java.util.zip.Deflater().setLevel(1);
    }
    HandleReport after = NativeHandles.report();
    // The cleaner frees the dropped ones after a collection; an Inflater another thread borrows
    // for a moment (a jar entry read while loading a class) is open until it is returned.
    for (int i = 0; i < 200; i++) {
      if (after.kind("Deflater").leaked() - before.kind("Deflater").leaked() >= ZIP_LEAKED
          && after.kind("Inflater").open() - before.kind("Inflater").open() <= ZIP_OPEN) {
        break;
      }
      System.gc();
      Thread.sleep(50);
      after = NativeHandles.report();
    }
    for (String kind : List.of("Inflater", "Deflater")) {
      HandleReport.KindCount b = before.kind(kind);
      HandleReport.KindCount a = after.kind(kind);
      System.out.println(
          kind
              + " "
              + (a.created() - b.created())
              + " "
              + (a.closed() - b.closed())
              + " "
              + (a.open() - b.open())
              + " "
              + (a.leaked() - b.leaked())
              + " "
              + (a.pooled() - b.pooled()));
    }
    System.out.println("held " + open.size());
  }

  private static void zipChurn(int threads, int cycles) throws InterruptedException {
    List<Thread> workers = new ArrayList<>();
    for (int t = 0; t < threads; t++) {
      Thread worker =
          new Thread(
              () -> {
                for (int i = 0; i < cycles; i++) {
                  new java.util.zip.Inflater().end();
                  new java.util.zip.Deflater().end();
                }
              });
      worker.start();
      workers.add(worker);
    }
    for (Thread worker : workers) {
      worker.join();
    }
  }

  /** {@code threads} threads each create and close {@code cycles} ColumnFamilyOptions. */
  static void churn(int threads, int cycles) throws Exception {
    try (HandleScope scope = NativeHandles.scope("churn")) {
      CountDownLatch start = new CountDownLatch(1);
      List<Thread> workers = new ArrayList<>();
      for (int t = 0; t < threads; t++) {
        Thread worker =
            new Thread(
                () -> {
                  try {
                    start.await();
                  } catch (InterruptedException e) {
                    return;
                  }
                  for (int i = 0; i < cycles; i++) {
                    new ColumnFamilyOptions().close();
                  }
                });
        worker.start();
        workers.add(worker);
      }
      start.countDown();
      for (Thread worker : workers) {
        worker.join();
      }
      String failure = scope.check();
      System.out.println("scope " + scope);
      System.out.println("failure " + (failure == null ? "none" : failure.split("\n")[0]));
      HandleReport.KindCount kind = NativeHandles.report().kind("ColumnFamilyOptions");
      System.out.println(
          "kind "
              + kind.created()
              + " "
              + kind.closed()
              + " "
              + kind.open()
              + " "
              + kind.leaked()
              + " "
              + kind.transferred());
    }
  }
}
