package dev.nativemem.cli;

import dev.nativemem.HeapProfile;
import dev.nativemem.internal.NativeBridge;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

@Command(
    name = "report",
    description = {
      "Analyse a jemalloc heap profile (heap_v2 dump) without jeprof: top sites, flame graph,"
          + " pprof, collapsed stacks; with --base, the growth since an earlier dump."
    })
final class ReportCommand implements Callable<Integer> {
  enum Format {
    text,
    svg,
    pprof,
    collapsed
  }

  @Parameters(index = "0", paramLabel = "<dump>", description = "The heap profile to analyse.")
  Path dump;

  @Option(
      names = "--base",
      paramLabel = "<dump>",
      description = "An earlier dump: show the growth since it (like jeprof --base).")
  Path base;

  @Option(
      names = "--format",
      defaultValue = "text",
      description = "One of: ${COMPLETION-CANDIDATES} (default: ${DEFAULT-VALUE}).")
  Format format;

  @Option(
      names = "--top",
      defaultValue = "20",
      paramLabel = "N",
      description = "Sites to list (text; default: ${DEFAULT-VALUE}).")
  int top;

  @Option(
      names = {"-o", "--output"},
      paramLabel = "FILE",
      description = "Write to a new FILE instead of standard output (required for svg, pprof).")
  Path output;

  @Override
  public Integer call() {
    if (top <= 0) {
      throw new IllegalArgumentException("--top must be positive, got " + top);
    }
    HeapProfile profile = HeapProfile.open(dump);
    HeapProfile baseProfile = base == null ? null : HeapProfile.open(base);
    String basePath = baseProfile == null ? null : baseProfile.path().toString();
    if (output != null) {
      NativeBridge.profileWrite(
          profile.path().toString(),
          basePath,
          format.name(),
          top,
          output.toAbsolutePath().toString());
      System.err.println("wrote " + output.toAbsolutePath());
      return 0;
    }
    if (format == Format.svg || format == Format.pprof) {
      throw new IllegalArgumentException(
          "--format "
              + format
              + " writes a file: add -o FILE (for example -o profile."
              + format
              + ")");
    }
    System.out.print(
        NativeBridge.profileRender(profile.path().toString(), basePath, format.name(), top));
    return 0;
  }
}
