package dev.nativemem.cli;

import dev.nativemem.NativeMemory;
import dev.nativemem.incident.IncidentPage;
import dev.nativemem.internal.NewFiles;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.nio.file.Paths;
import org.apache.commons.cli.CommandLine;
import org.apache.commons.cli.Option;
import org.apache.commons.cli.Options;

/** Renders an incident bundle's HTML page, into the bundle or to a new file. */
final class IncidentCommand extends CliCommand {
  IncidentCommand() {
    super(
        "incident",
        "Render an incident bundle as one self-contained HTML page (incident.html in the bundle,"
            + " or -o FILE) and print its path.",
        "<bundle-dir>");
  }

  @Override
  Options options() {
    return new Options()
        .addOption(
            Option.builder("o")
                .longOpt("output")
                .hasArg()
                .argName("FILE")
                .desc("Write the page to this new FILE instead of into the bundle.")
                .get());
  }

  @Override
  int run(CommandLine line) throws Exception {
    if (line.getArgList().size() != 1) {
      throw new UsageException("expected one bundle directory, got " + line.getArgList());
    }
    Path bundle = Paths.get(line.getArgList().get(0));
    Path written;
    if (line.hasOption("output")) {
      byte[] page = IncidentPage.render(bundle).getBytes(StandardCharsets.UTF_8);
      written = NewFiles.writeNew(Paths.get(line.getOptionValue("output")), page, "incident page");
    } else {
      written = NativeMemory.incidentPage(bundle);
    }
    out.println(written);
    return 0;
  }
}
