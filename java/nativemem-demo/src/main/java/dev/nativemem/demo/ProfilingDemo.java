package dev.nativemem.demo;

import dev.nativemem.NativeMemory;
import dev.nativemem.base.NativeMemoryException;
import dev.nativemem.internal.ByteFormat;
import dev.nativemem.internal.PreloadAllocator;
import dev.nativemem.profile.HeapProfile;
import dev.nativemem.profile.HeapProfiler;
import dev.nativemem.profile.ProfileReport;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The demo's heap-profile section: under a profiling jemalloc, sample a native-memory-heavy
 * workload and dump a profile; otherwise run this section again in a child JVM that has one.
 */
public final class ProfilingDemo {
  /** The workload's own classes, whose lines the report leads with. */
  private static final List<String> WORKLOAD_CLASSES =
      Arrays.asList(ZipWorkload.class.getName(), "dev.nativemem.demo.RocksDbWorkload");

  /** Cumulative sites searched for the workload's Java lines (every frame of its few stacks). */
  private static final int OWNER_SEARCH = 500;

  /** Set in the child so it never starts another. */
  private static final String CHILD_PROPERTY = "nativemem.demo.child";

  private ProfilingDemo() {}

  /** Entry point of the child JVM. */
  public static void main(String[] args) {
    run();
  }

  /** Prints the section to standard output. */
  public static void run() {
    System.out.println();
    System.out.println("Heap profile on demand");
    HeapProfiler profiler = NativeMemory.profiling();
    if (profiler.isAvailable()) {
      profile(profiler);
    } else if (Boolean.getBoolean(CHILD_PROPERTY)) {
      System.out.println("  profiling unavailable even in the child JVM: " + reason(profiler));
    } else {
      rerunWithPreloadAllocator();
    }
  }

  private static String reason(HeapProfiler profiler) {
    return profiler.unavailableReason();
  }

  private static void rerunWithPreloadAllocator() {
    System.out.println(
        "  this JVM's malloc cannot profile ("
            + NativeMemory.allocator().kind().name().toLowerCase(java.util.Locale.ROOT)
            + "), so the demo runs this part again in a child JVM with:");
    Path library;
    try {
      // The default of 'env': a stable path, so jeprof can still read it after the demo.
      library =
          PreloadAllocator.extractTo(
              PreloadAllocator.defaultDirectory(),
              "the demo extracts it to ~/.nativemem; make that a directory of yours, or start the"
                  + " demo with -Duser.home=<a directory of yours>");
    } catch (RuntimeException e) {
      System.out.println("  cannot extract the preload allocator: " + e.getMessage());
      return;
    }
    String conf = "prof:true,prof_active:false";
    System.out.println("    LD_PRELOAD=" + library);
    System.out.println("    MALLOC_CONF=" + conf);
    System.out.println(
        "  (in a service: 'java -jar nativemem.jar env' prints these lines for a stable path)");
    List<String> command = new ArrayList<>();
    command.add(Paths.get(System.getProperty("java.home"), "bin", "java").toString());
    command.add("-D" + CHILD_PROPERTY + "=true");
    // Settings such as -Dnativemem.profile.dir apply to the child too.
    for (String key : System.getProperties().stringPropertyNames()) {
      if (key.startsWith("nativemem.") && !key.equals(CHILD_PROPERTY)) {
        command.add("-D" + key + "=" + System.getProperty(key));
      }
    }
    command.add("-cp");
    command.add(System.getProperty("java.class.path"));
    command.add(ProfilingDemo.class.getName());
    ProcessBuilder builder = new ProcessBuilder(command).inheritIO();
    builder.environment().put("LD_PRELOAD", library.toString());
    builder.environment().put("MALLOC_CONF", conf);
    try {
      Process child = builder.start();
      if (!child.waitFor(5, TimeUnit.MINUTES)) {
        child.destroyForcibly();
        System.out.println("  the child JVM did not finish within 5 minutes; stopped it");
      } else if (child.exitValue() != 0) {
        System.out.println("  the child JVM failed with exit code " + child.exitValue());
      }
    } catch (IOException e) {
      System.out.println("  cannot start the child JVM: " + e.getMessage());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /**
   * Turns on the Java frames above each sampled allocation ({@code
   * -Dnativemem.profile.javaFrames=true} does it at start); says what that gives, or why not.
   */
  private static String javaFrames(HeapProfiler profiler) {
    try {
      if (profiler.javaFrames(true)) {
        return "Java frames on (HeapProfiler.javaFrames(true)): each sample names the Java line"
            + " above its native allocation";
      }
      return "Java frames could not be turned on: stacks end at the JNI call";
    } catch (NativeMemoryException e) {
      return "Java frames unavailable (" + e.getMessage() + "): stacks end at the JNI call";
    }
  }

  /** Whether rocksdbjni is on the class path, without loading classes that need it. */
  static boolean rocksDbPresent() {
    try {
      Class.forName("org.rocksdb.RocksDB", false, ProfilingDemo.class.getClassLoader());
      return true;
    } catch (ClassNotFoundException | LinkageError e) {
      return false;
    }
  }

  private static void profile(HeapProfiler profiler) {
    System.out.println(
        "  allocator: "
            + NativeMemory.allocator()
            + "; sampling one allocation per "
            + ByteFormat.human(profiler.sampleIntervalBytes())
            + " on average");
    System.out.println("  " + javaFrames(profiler));
    profiler.start();
    System.out.println("  profiling started (prof.active); running a native-memory workload:");
    List<AutoCloseable> live = new ArrayList<>();
    try {
      live.addAll(ZipWorkload.run());
      if (rocksDbPresent()) {
        live.addAll(RocksDbWorkload.run());
      } else {
        System.out.println(
            "    RocksDB: rocksdbjni is not on the class path (the nativemem-demo jar has it);"
                + " skipped");
      }
      profiler.stop();
      HeapProfile profile = NativeMemory.dumpProfile();
      System.out.println("  profiling stopped; profile written while the workload's memory lives:");
      System.out.println("    " + profile.path());
      System.out.println("    symbols for offline use: " + profile.path() + ".symbols/");
      System.out.println(
          Files.exists(Paths.get(profile.path() + ".symbols", "perf.map"))
              ? "    (with the JVM's perf map, which names JIT-compiled frames)"
              : "    (no perf map: Compiler.perfmap needs JDK 17+, so JIT frames stay unnamed)");
      System.out.println(
          "    "
              + ByteFormat.human(profile.inUseBytes())
              + " in use, estimated from "
              + ByteFormat.human(profile.sampledBytes())
              + " of samples; read it with:");
      System.out.println(
          "    jeprof --text "
              + Paths.get(System.getProperty("java.home"), "bin", "java")
              + " "
              + profile.path());
      ProfileReport report = profile.analyze(OWNER_SEARCH);
      System.out.println();
      for (String line : JavaOwners.render(report, WORKLOAD_CLASSES)) {
        System.out.println("  " + line);
      }
      System.out.println();
      System.out.println("  or without jeprof, analysed in this JVM (flat, then cumulative):");
      for (String line : profile.analyze(10).toString().split("\n")) {
        System.out.println("  " + line);
      }
      Path flameGraph = Paths.get(profile.path() + ".svg");
      profile.writeFlameGraph(flameGraph);
      System.out.println("  flame graph of the workload's live native memory: " + flameGraph);
    } catch (Exception e) {
      System.out.println("  the workload failed: " + e);
    } finally {
      for (AutoCloseable c : live) {
        try {
          c.close();
        } catch (Exception ignored) {
          // Demo cleanup only.
        }
      }
    }
  }
}
