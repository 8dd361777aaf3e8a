package dev.nativemem.cli;

import dev.nativemem.NativeMemory;
import org.apache.commons.cli.CommandLine;
import org.apache.commons.cli.Options;

final class VersionCommand extends CliCommand {
  VersionCommand() {
    super(
        "version",
        "Print nativemem's versions (Java classes, native library) and the Java runtime's.",
        "");
  }

  @Override
  Options options() {
    return new Options().addOption(null, "json", false, "Print JSON.");
  }

  @Override
  int run(CommandLine line) {
    NativeMemory.Versions versions = NativeMemory.version();
    out.println(line.hasOption("json") ? versions.toJson() : versions);
    return 0;
  }
}
