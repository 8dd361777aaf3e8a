package dev.nativemem.cli;

import dev.nativemem.internal.ByteFormat;
import dev.nativemem.internal.PreloadAllocator;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import org.apache.commons.cli.CommandLine;
import org.apache.commons.cli.Option;
import org.apache.commons.cli.Options;

final class EnvCommand extends CliCommand {
  EnvCommand() {
    super(
        "env",
        "Extract the preload allocator (jemalloc, profiling-ready, container-aware) and print the"
            + " settings that give a service heap profiles on demand.",
        "");
  }

  private static Path defaultDir() {
    return Paths.get(System.getProperty("user.home"), ".nativemem");
  }

  @Override
  Options options() {
    return new Options()
        .addOption(
            Option.builder()
                .longOpt("dir")
                .hasArg()
                .argName("DIR")
                .desc(
                    "Stable directory to extract the allocator into (default: "
                        + defaultDir()
                        + "). Services must be able to read it; others must not be able to"
                        + " write it.")
                .get())
        .addOption(
            Option.builder()
                .longOpt("cpus")
                .hasArg()
                .argName("N")
                .desc(
                    "Size jemalloc's arenas for N CPUs instead of the count the allocator detects"
                        + " at start (prints a MALLOC_CONF line).")
                .get());
  }

  @Override
  int run(CommandLine line) {
    Path dir = line.hasOption("dir") ? Paths.get(line.getOptionValue("dir")) : defaultDir();
    Integer cpus = null;
    if (line.hasOption("cpus")) {
      long n = longValue(line, "cpus", 0);
      if (n < 1 || n > PreloadAllocator.MAX_CPUS) {
        throw new UsageException(
            "--cpus must be from 1 to "
                + PreloadAllocator.MAX_CPUS
                + " (4 arenas per CPU, and jemalloc allows at most 4094), got "
                + n);
      }
      cpus = (int) n;
    }
    Path library =
        PreloadAllocator.extractTo(
            dir,
            "choose another --dir: one of yours, on a file system that allows executables, that no"
                + " other user can write");
    long size;
    try {
      size = Files.size(library);
    } catch (java.io.IOException e) {
      size = -1;
    }
    int here = Runtime.getRuntime().availableProcessors();
    System.out.println(
        "Preload allocator: " + library + " (" + ByteFormat.human(size) + ", jemalloc 5.3)");
    System.out.println();
    System.out.println("It applies by itself, before the service's first allocation:");
    System.out.println(
        "  prof:true,prof_active:false   heap profiles on demand: NativeMemory.profiling().start()"
            + " and NativeMemory.dumpProfile()");
    System.out.println(
        "  narenas:<4 x container CPUs>  from the cgroup CPU quota as the JVM counts it (here "
            + here
            + " CPUs: narenas:"
            + PreloadAllocator.narenas(here)
            + ")");
    System.out.println(
        "  dirty_decay_ms:1000,muzzy_decay_ms:0   freed memory returns to the OS within about a"
            + " second");
    System.out.println(
        "  background_thread:true        in processes named java only: purged off the"
            + " application's threads");
    System.out.println("Options in MALLOC_CONF are applied after these and override them.");
    String conf = cpus == null ? null : "narenas:" + PreloadAllocator.narenas(cpus);
    System.out.println();
    System.out.println("# shell");
    System.out.println("export LD_PRELOAD=" + shellQuote(library.toString()));
    if (conf != null) {
      System.out.println("export MALLOC_CONF=" + conf);
    }
    System.out.println();
    System.out.println("# Dockerfile (copy " + library.getFileName() + " into the image first)");
    System.out.println("ENV LD_PRELOAD=" + library);
    if (conf != null) {
      System.out.println("ENV MALLOC_CONF=" + conf);
    }
    return 0;
  }

  private static String shellQuote(String s) {
    return s.matches("[A-Za-z0-9_./-]+") ? s : "'" + s.replace("'", "'\\''") + "'";
  }
}
