package dev.nativemem.cli;

import dev.nativemem.base.text.TerminalText;
import dev.nativemem.profile.ProfileRequest;
import dev.nativemem.profile.ProfileRequest.Format;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import org.apache.commons.cli.CommandLine;
import org.apache.commons.cli.Option;
import org.apache.commons.cli.Options;

/**
 * {@code analyze}: heap profiles (jemalloc's heap_v2 dumps) read, merged and rendered. Called
 * {@code report} before 0.1.0; that name still runs it.
 */
final class AnalyzeCommand extends CliCommand {
  /** The name this command had, kept working: the CLI notes the new one on standard error. */
  static final String OLD_NAME = "report";

  AnalyzeCommand() {
    super(
        "analyze",
        "Analyse jemalloc heap profiles (heap_v2 dumps) without jeprof: top sites, flame graph,"
            + " pprof, collapsed stacks. Several dumps (files, directories, quoted glob patterns,"
            + " incident bundles) are merged by function names, each symbolized with its own"
            + " sidecar: totals are summed and each site says in how many processes it is; pprof"
            + " samples carry pid, host, dump and dump_time_ms labels (go tool pprof -tagfocus)."
            + " With --base, the growth since earlier dump(s), averaged per process.",
        "<dump|dir|pattern>...");
  }

  @Override
  Options options() {
    return new Options()
        .addOption(
            Option.builder()
                .longOpt("base")
                .hasArg()
                .argName("dump")
                .desc(
                    "An earlier dump: show the growth since it (like jeprof --base). Repeat it, or"
                        + " give a directory or pattern, for a group: the growth is then the"
                        + " per-process average of the dumps minus that of the base dumps.")
                .get())
        .addOption(
            Option.builder()
                .longOpt("by-process")
                .desc("List each process's total and its part of the top site (outliers).")
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
    if (line.getArgList().isEmpty()) {
      throw new UsageException("missing the <dump> to analyse (a file, directory or pattern)");
    }
    List<Path> dumps = paths(line.getArgList());
    List<Path> bases =
        line.hasOption("base") ? paths(Arrays.asList(line.getOptionValues("base"))) : List.of();
    Path output = line.hasOption("output") ? Paths.get(line.getOptionValue("output")) : null;
    Format format = format(line.getOptionValue("format", "text"));
    long top = longValue(line, "top", 20);
    if (top <= 0 || top > Integer.MAX_VALUE) {
      throw new UsageException("--top must be from 1 to " + Integer.MAX_VALUE + ", got " + top);
    }
    return write(dumps, bases, line.hasOption("by-process"), format, (int) top, output);
  }

  private static List<Path> paths(List<String> names) {
    List<Path> paths = new ArrayList<>();
    for (String name : names) {
      paths.add(Paths.get(name));
    }
    return paths;
  }

  private static Format format(String name) {
    try {
      return Format.valueOf(name.toUpperCase(Locale.ROOT));
    } catch (IllegalArgumentException e) {
      throw new UsageException(
          "--format must be one of text, svg, pprof, collapsed; got '" + name + "'");
    }
  }

  private int write(
      List<Path> dumps, List<Path> bases, boolean byProcess, Format format, int top, Path output) {
    String name = format.name().toLowerCase(Locale.ROOT);
    if (output == null && format.fileOnly()) {
      throw new UsageException(
          "--format " + name + " writes a file: add -o FILE (for example -o profile." + name + ")");
    }
    // Not HeapProfile.open, which would parse each dump once more for a summary not shown here.
    ProfileRequest request = ProfileRequest.merge(dumps).top(top);
    if (!bases.isEmpty()) {
      request.bases(bases);
    }
    if (byProcess) {
      request.byProcess();
    }
    if (output != null) {
      request.write(format, output).run();
      System.err.println("wrote " + output.toAbsolutePath());
    } else {
      // Text and collapsed stacks carry names from dumps and sidecars others may have written:
      // the native renderer shows their control characters already; this keeps any it missed.
      out.print(TerminalText.escape(request.render(format).run().rendered(format)));
    }
    return 0;
  }
}
