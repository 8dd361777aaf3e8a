package dev.nativemem.cli;

import dev.nativemem.NativeMemory;
import dev.nativemem.Versions;
import org.apache.commons.cli.CommandLine;
import org.apache.commons.cli.Options;

final class VersionCommand extends CliCommand {
  VersionCommand() {
    super("version", "Print the Java and native library versions.", "");
  }

  @Override
  Options options() {
    return new Options().addOption(null, "json", false, "Print JSON.");
  }

  @Override
  int run(CommandLine line) {
    Versions versions = NativeMemory.version();
    out.println(line.hasOption("json") ? versions.toJson() : versions.toString());
    return 0;
  }
}
