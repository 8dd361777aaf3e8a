package dev.nativemem.benchmarks;

import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.openjdk.jmh.results.RunResult;
import org.openjdk.jmh.runner.Runner;
import org.openjdk.jmh.runner.options.Options;
import org.openjdk.jmh.runner.options.OptionsBuilder;
import org.openjdk.jmh.runner.options.TimeValue;

/**
 * One run, five configurations: no agent, then the agent at each level. Prints a table of
 * nanoseconds per create+close and the ratio to no agent.
 *
 * <p>{@code java -cp "$(cat benchmarks/target/benchmark.classpath):benchmarks/target/classes"
 * dev.nativemem.benchmarks.HandleTrackingRun java/nativemem/target/nativemem-0.1.0.jar}
 */
public final class HandleTrackingRun {
  private HandleTrackingRun() {}

  public static void main(String[] args) throws Exception {
    if (args.length != 1 || !Files.isRegularFile(Paths.get(args[0]))) {
      System.err.println("usage: HandleTrackingRun <path to nativemem jar>");
      System.exit(2);
    }
    String agent = "-javaagent:" + Paths.get(args[0]).toAbsolutePath();
    Map<String, String[]> configurations = new LinkedHashMap<>();
    configurations.put("no agent", new String[0]);
    configurations.put("off", new String[] {agent + "=level=off"});
    configurations.put("counts", new String[] {agent + "=level=counts"});
    configurations.put("sampled 1/128", new String[] {agent + "=level=sampled,interval=128"});
    configurations.put("full", new String[] {agent + "=level=full"});
    Map<String, Map<String, double[]>> table = new LinkedHashMap<>();
    for (Map.Entry<String, String[]> config : configurations.entrySet()) {
      Options options =
          new OptionsBuilder()
              .include(HandleTrackingBenchmark.class.getName())
              .forks(2)
              .warmupIterations(3)
              .warmupTime(TimeValue.seconds(1))
              .measurementIterations(5)
              .measurementTime(TimeValue.seconds(1))
              .jvmArgsAppend(config.getValue())
              .build();
      Collection<RunResult> results = new Runner(options).run();
      for (RunResult result : results) {
        String name = result.getParams().getBenchmark();
        name = name.substring(name.lastIndexOf('.') + 1);
        table
            .computeIfAbsent(name, k -> new LinkedHashMap<>())
            .put(
                config.getKey(),
                new double[] {
                  result.getPrimaryResult().getScore(), result.getPrimaryResult().getScoreError()
                });
      }
    }
    List<String> lines = new ArrayList<>();
    lines.add(
        "| benchmark | configuration | ns per create+close | ± (99.9%) | ratio to no agent |");
    lines.add("|---|---|---:|---:|---:|");
    for (Map.Entry<String, Map<String, double[]>> row : table.entrySet()) {
      double base = row.getValue().get("no agent")[0];
      for (Map.Entry<String, double[]> cell : row.getValue().entrySet()) {
        double[] score = cell.getValue();
        lines.add(
            String.format(
                "| %s | %s | %.1f | %.1f | %.2f |",
                row.getKey(), cell.getKey(), score[0], score[1], score[0] / base));
      }
    }
    System.out.println(String.join("\n", lines));
  }
}
