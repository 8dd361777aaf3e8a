package dev.nativemem.cli;

import dev.nativemem.ProfileRequest;
import dev.nativemem.ProfileRequest.Format;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.Locale;
import org.apache.commons.cli.CommandLine;
import org.apache.commons.cli.Option;
import org.apache.commons.cli.Options;

final class ReportCommand extends CliCommand {
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

  private static Format format(String name) {
    try {
      return Format.valueOf(name.toUpperCase(Locale.ROOT));
    } catch (IllegalArgumentException e) {
      throw new UsageException(
          "--format must be one of text, svg, pprof, collapsed; got '" + name + "'");
    }
  }

  private int write(Path dump, Path base, Format format, int top, Path output) {
    String name = format.name().toLowerCase(Locale.ROOT);
    if (output == null && format.fileOnly()) {
      throw new UsageException(
          "--format " + name + " writes a file: add -o FILE (for example -o profile." + name + ")");
    }
    // Not HeapProfile.open, which would parse each dump once more for a summary not shown here.
    ProfileRequest request = ProfileRequest.of(dump).top(top);
    if (base != null) {
      request.base(base);
    }
    if (output != null) {
      request.write(format, output).run();
      System.err.println("wrote " + output.toAbsolutePath());
    } else {
      out.print(request.render(format).run().rendered(format));
    }
    return 0;
  }
}
