package dev.nativemem.profile;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Real heap_v2 dumps for the tests: the C workload of the Rust tests ({@code
 * rust/nativemem/tests/workload/heap_workload.c}) run under Debian's jemalloc with profiling on.
 * Its planted sites: {@code planted_big} 256 x 64 KiB, {@code planted_small} 4096 x 256 B, and
 * {@code planted_growth} 128 x 32 KiB between the base and the final dump.
 */
final class HeapDumps {
  static final Path JEMALLOC = Paths.get("/usr/lib/x86_64-linux-gnu/libjemalloc.so.2");
  static final Path SOURCE = Paths.get("../../rust/nativemem/tests/workload/heap_workload.c");

  private HeapDumps() {}

  /** Why dumps cannot be made on this machine, or null if they can. */
  static String missingTools() {
    if (!Files.exists(JEMALLOC)) {
      return JEMALLOC + " is missing (apt-get install libjemalloc2)";
    }
    if (!Files.exists(SOURCE)) {
      return SOURCE.toAbsolutePath() + " is missing";
    }
    return onPath("cc") ? null : "no C compiler on PATH (apt-get install gcc)";
  }

  static boolean onPath(String tool) {
    for (String dir : System.getenv().getOrDefault("PATH", "").split(":")) {
      if (Files.isExecutable(Paths.get(dir, tool))) {
        return true;
      }
    }
    return false;
  }

  /** Compiles the workload into {@code dir} and writes {@code base.heap} and {@code now.heap}. */
  static void make(Path dir) throws IOException, InterruptedException {
    Path binary = dir.resolve("heap_workload");
    run(
        dir,
        false,
        "cc",
        "-g",
        "-O1",
        "-fno-omit-frame-pointer",
        "-o",
        binary.toString(),
        SOURCE.toAbsolutePath().toString());
    run(
        dir,
        true,
        binary.toString(),
        dir.resolve("now.heap").toString(),
        "6",
        dir.resolve("base.heap").toString());
  }

  /** Runs a command; returns its standard output. */
  static String run(Path dir, boolean profiled, String... command)
      throws IOException, InterruptedException {
    List<String> args = new ArrayList<>(Arrays.asList(command));
    Path out = dir.resolve("out.txt");
    ProcessBuilder builder =
        new ProcessBuilder(args)
            .directory(dir.toFile())
            .redirectErrorStream(true)
            .redirectOutput(out.toFile());
    if (profiled) {
      builder.environment().put("LD_PRELOAD", JEMALLOC.toString());
      builder.environment().put("MALLOC_CONF", "prof:true,lg_prof_sample:9");
    }
    Process process = builder.start();
    if (!process.waitFor(60, TimeUnit.SECONDS)) {
      process.destroyForcibly();
      throw new IllegalStateException("timed out: " + args);
    }
    String output = new String(Files.readAllBytes(out), StandardCharsets.UTF_8);
    if (process.exitValue() != 0) {
      throw new IllegalStateException(args + " failed: " + output);
    }
    return output;
  }
}
