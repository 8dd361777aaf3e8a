package dev.nativemem.cli;

import dev.nativemem.internal.NativeBridge;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.Locale;
import org.apache.commons.cli.CommandLine;
import org.apache.commons.cli.Option;
import org.apache.commons.cli.Options;

final class ReportCommand extends CliCommand {
  /** What the report is written as. */
  enum Format {
    text,
    svg,
    pprof,
    collapsed
  }

  ReportCommand() {
    super(
        "report",
        "Analyse a jemalloc heap profile (heap_v2 dump) without jeprof: top sites, flame graph,"
            + " pprof, collapsed stacks; with --base, the growth since an earlier dump.",
        "<dump>");
  }

  @Override
  Options options() {
    return new Options()
        .addOption(
            Option.builder()
                .longOpt("base")
                .hasArg()
                .argName("dump")
                .desc("An earlier dump: show the growth since it (like jeprof --base).")
                .get())
        .addOption(
            Option.builder()
                .longOpt("format")
                .hasArg()
                .argName("FORMAT")
                .desc("One of: text, svg, pprof, collapsed (default: text).")
                .get())
        .addOption(
            Option.builder()
                .longOpt("top")
                .hasArg()
                .argName("N")
                .desc("Sites to list (text; default: 20).")
                .get())
        .addOption(
            Option.builder("o")
                .longOpt("output")
                .hasArg()
                .argName("FILE")
                .desc("Write to a new FILE instead of standard output (required for svg, pprof).")
                .get());
  }

  @Override
  int run(CommandLine line) {
    if (line.getArgList().size() != 1) {
      throw new UsageException(
          line.getArgList().isEmpty()
              ? "missing the <dump> to analyse"
              : "one <dump> at a time, got " + line.getArgList());
    }
    Path dump = Paths.get(line.getArgList().get(0));
    Path base = line.hasOption("base") ? Paths.get(line.getOptionValue("base")) : null;
    Path output = line.hasOption("output") ? Paths.get(line.getOptionValue("output")) : null;
    Format format = format(line.getOptionValue("format", "text"));
    long top = longValue(line, "top", 20);
    if (top <= 0 || top > Integer.MAX_VALUE) {
      throw new UsageException("--top must be from 1 to " + Integer.MAX_VALUE + ", got " + top);
    }
    return write(dump, base, format, (int) top, output);
  }

  /** The dump's absolute path; an error that says what to do when there is no such file. */
  private static String existing(Path dump) {
    Path absolute = dump.toAbsolutePath();
    if (!Files.isRegularFile(absolute)) {
      throw new IllegalArgumentException(
          "heap profile "
              + absolute
              + " does not exist or is not a file; write one with NativeMemory.dumpProfile() or"
              + " the 'prof.dump' mallctl");
    }
    return absolute.toString();
  }

  private static Format format(String name) {
    try {
      return Format.valueOf(name.toLowerCase(Locale.ROOT));
    } catch (IllegalArgumentException e) {
      throw new UsageException(
          "--format must be one of text, svg, pprof, collapsed; got '" + name + "'");
    }
  }

  private int write(Path dump, Path base, Format format, int top, Path output) {
    // Straight to the one native call that parses and symbolizes: HeapProfile.open would parse
    // each dump once more for its summary, which a report does not show.
    String dumpPath = existing(dump);
    String basePath = base == null ? null : existing(base);
    if (output != null) {
      NativeBridge.profileWrite(
          dumpPath, basePath, format.name(), top, output.toAbsolutePath().toString());
      System.err.println("wrote " + output.toAbsolutePath());
      return 0;
    }
    if (format == Format.svg || format == Format.pprof) {
      throw new UsageException(
          "--format "
              + format
              + " writes a file: add -o FILE (for example -o profile."
              + format
              + ")");
    }
    out.print(NativeBridge.profileRender(dumpPath, basePath, format.name(), top));
    return 0;
  }
}
