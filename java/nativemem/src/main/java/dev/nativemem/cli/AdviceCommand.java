package dev.nativemem.cli;

import dev.nativemem.Advice;
import dev.nativemem.NativeMemory;
import java.util.List;
import java.util.stream.Collectors;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

@Command(
    name = "advice",
    description = "Print what to change about this JVM's native memory, each with its reason.")
final class AdviceCommand implements Runnable {
  @Option(names = "--json", description = "Print a JSON array instead of text.")
  boolean json;

  @Override
  public void run() {
    List<Advice> advice = NativeMemory.advice();
    if (json) {
      System.out.println(
          advice.stream().map(Advice::toJson).collect(Collectors.joining(",", "[", "]")));
    } else if (advice.isEmpty()) {
      System.out.println("No advice: nothing found to change.");
    } else {
      advice.forEach(System.out::println);
    }
  }
}
