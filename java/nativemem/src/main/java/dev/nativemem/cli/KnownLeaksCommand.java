package dev.nativemem.cli;

import dev.nativemem.base.text.TerminalText;
import dev.nativemem.handles.catalogue.CatalogueCheck;
import dev.nativemem.handles.catalogue.LeakCatalogue;
import dev.nativemem.internal.Json;
import java.net.URL;
import java.net.URLClassLoader;
import java.util.ArrayList;
import java.util.List;
import org.apache.commons.cli.CommandLine;
import org.apache.commons.cli.Option;
import org.apache.commons.cli.Options;

/**
 * The catalogue of known native leaks against an application's class path: which libraries it has,
 * in which versions, and whether they are affected; a catalogue pattern that matches nothing in a
 * library that is there fails the command (exit 1).
 */
final class KnownLeaksCommand extends CliCommand {
  KnownLeaksCommand() {
    super(
        "known-leaks",
        "List the known native leaks nativemem recognises; with --class-path, which of them the"
            + " application's libraries have.",
        "");
  }

  @Override
  Options options() {
    return new Options()
        .addOption(
            Option.builder()
                .longOpt("class-path")
                .hasArg()
                .argName("PATH")
                .desc(
                    "The application's class path as java -cp takes it (':'-separated jars,"
                        + " directories, dir/* for every jar in dir); a directory also brings"
                        + " the jars in it.")
                .get())
        .addOption(null, "json", false, "Print JSON.");
  }

  @Override
  int run(CommandLine line) throws Exception {
    List<URL> urls = ClassPathElements.of(line.getOptionValue("class-path", ""));
    // The platform loader as parent: the application's classes, never nativemem's own.
    try (URLClassLoader loader =
        new URLClassLoader(urls.toArray(new URL[0]), ClassLoader.getPlatformClassLoader())) {
      List<CatalogueCheck> checks = LeakCatalogue.get().inspect(loader);
      List<Object> json = new ArrayList<>();
      boolean problems = false;
      for (CatalogueCheck check : checks) {
        json.add(check.toMap());
        problems |= !check.problems().isEmpty();
        if (!line.hasOption("json")) {
          out.println(TerminalText.escape(check.toString()));
          for (String problem : check.problems()) {
            out.println(TerminalText.escape("  PATTERN MATCHES NOTHING: " + problem));
          }
        }
      }
      if (line.hasOption("json")) {
        out.println(Json.write(json));
      }
      return problems ? 1 : 0;
    }
  }
}
