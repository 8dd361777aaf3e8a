package dev.nativemem.cli;

import dev.nativemem.NativeMemory;
import dev.nativemem.internal.Json;
import java.util.LinkedHashMap;
import java.util.Map;
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
    String runtime = System.getProperty("java.runtime.version", "unknown");
    String vm = System.getProperty("java.vm.name", "unknown");
    String home = System.getProperty("java.home", "unknown");
    if (line.hasOption("json")) {
      Map<String, Object> json = new LinkedHashMap<>(Json.parseObject(versions.toJson()));
      json.put("java_runtime", runtime);
      json.put("java_vm", vm);
      json.put("java_home", home);
      out.println(Json.write(json));
    } else {
      out.println(versions);
      out.println("Java " + runtime + " (" + vm + ", " + home + ")");
    }
    return 0;
  }
}
