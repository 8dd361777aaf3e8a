package dev.nativemem.cli;

import dev.nativemem.NativeMemory;
import dev.nativemem.base.Advice;
import java.util.List;
import java.util.stream.Collectors;
import org.apache.commons.cli.CommandLine;
import org.apache.commons.cli.Options;

final class AdviceCommand extends CliCommand {
  AdviceCommand() {
    super(
        "advice", "Print what to change about this JVM's native memory, each with its reason.", "");
  }

  @Override
  Options options() {
    return new Options().addOption(null, "json", false, "Print a JSON array instead of text.");
  }

  @Override
  int run(CommandLine line) {
    List<Advice> advice = NativeMemory.advice();
    if (line.hasOption("json")) {
      out.println(advice.stream().map(Advice::toJson).collect(Collectors.joining(",", "[", "]")));
    } else if (advice.isEmpty()) {
      out.println("No advice: nothing found to change.");
    } else {
      advice.forEach(out::println);
    }
    return 0;
  }
}
