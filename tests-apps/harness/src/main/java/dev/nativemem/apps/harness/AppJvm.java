package dev.nativemem.apps.harness;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * Runs an application in a child JVM with the nativemem agent at {@code level=full} (or its default
 * level, {@link #defaultLevel()}), writing the agent's JSON report at exit, and keeps what the
 * application printed.
 */
public final class AppJvm {
  static final Path AGENT_JAR =
      Paths.get(System.getProperty("nativemem.jar", "missing-nativemem.jar"));
  private static final String JAVA =
      Paths.get(System.getProperty("java.home"), "bin", "java").toString();
  private static final long TIMEOUT_SECONDS = 240;

  private final String name;
  private final List<String> jvmArgs = new ArrayList<>();
  private final List<String> launcher = new ArrayList<>();
  private final Map<String, String> environment = new LinkedHashMap<>();
  private boolean agent = true;
  private String level = "level=full,";

  /** {@code name} names the run's directory under the module's {@code target/runs}. */
  public AppJvm(String name) {
    this.name = name;
  }

  public AppJvm jvmArg(String... args) {
    jvmArgs.addAll(Arrays.asList(args));
    return this;
  }

  /**
   * Starts the JVM through {@code command} (such as {@link MemoryCgroup#launcher()}), which runs
   * {@code "$0" "$@"}: the java command and its arguments.
   */
  public AppJvm launcher(String... command) {
    launcher.addAll(Arrays.asList(command));
    return this;
  }

  /**
   * Sets an environment variable of the child (after {@code LD_PRELOAD}, {@code MALLOC_CONF} and
   * {@code JAVA_TOOL_OPTIONS} of this JVM are removed, so those can be given here).
   */
  public AppJvm env(String name, String value) {
    environment.put(name, value);
    return this;
  }

  /** Runs the agent at its default level (no {@code level=} argument), as a user starts it. */
  public AppJvm defaultLevel() {
    level = "";
    return this;
  }

  /** Runs the application without the nativemem agent (nativemem on its class path only). */
  public AppJvm withoutAgent() {
    agent = false;
    return this;
  }

  /**
   * Starts {@code java -javaagent:... -jar <jar> <args>} and returns while it runs: for servers the
   * test talks to. {@link RunningApp#stop()} ends it.
   */
  public RunningApp start(Path jar, String... args) throws IOException {
    List<String> command = new ArrayList<>(Arrays.asList("-jar", jar.toString()));
    command.addAll(Arrays.asList(args));
    Launch launch = launch(command);
    return new RunningApp(launch.process, launch.out, launch.err, launch.report, launch.dir);
  }

  /**
   * Starts {@code java ... -cp <classPath> <mainClass> <args>} and returns while it runs: for a
   * server, or a process that runs until it is killed. {@link RunningApp#stop()} ends it.
   */
  public RunningApp startMain(String classPath, String mainClass, String... args)
      throws IOException {
    List<String> command = new ArrayList<>(Arrays.asList("-cp", classPath, mainClass));
    command.addAll(Arrays.asList(args));
    Launch launch = launch(command);
    return new RunningApp(launch.process, launch.out, launch.err, launch.report, launch.dir);
  }

  /** {@code java -javaagent:nativemem.jar=level=full,report=... -jar <jar> <args>}. */
  public AppRun jar(Path jar, String... args) throws IOException, InterruptedException {
    List<String> command = new ArrayList<>(Arrays.asList("-jar", jar.toString()));
    command.addAll(Arrays.asList(args));
    return run(command);
  }

  /** {@code java -javaagent:... -cp <classPath> <mainClass> <args>}. */
  public AppRun main(String classPath, String mainClass, String... args)
      throws IOException, InterruptedException {
    List<String> command = new ArrayList<>(Arrays.asList("-cp", classPath, mainClass));
    command.addAll(Arrays.asList(args));
    return run(command);
  }

  /**
   * {@code nativemem known-leaks --class-path <classPath> <options>}: the catalogue checked against
   * an application's jars, in a child JVM of its own.
   */
  public AppRun knownLeaks(String classPath, String... options)
      throws IOException, InterruptedException {
    List<String> args = new ArrayList<>(Arrays.asList("known-leaks", "--class-path", classPath));
    args.addAll(Arrays.asList(options));
    return cli(args.toArray(new String[0]));
  }

  /** {@code java -jar nativemem.jar <args>}: the CLI as a user runs it, in a child JVM. */
  public AppRun cli(String... args) throws IOException, InterruptedException {
    return main(AGENT_JAR.toString(), "dev.nativemem.cli.NativeMemoryCli", args);
  }

  private AppRun run(List<String> application) throws IOException, InterruptedException {
    Launch launch = launch(application);
    Process process = launch.process;
    if (!process.waitFor(TIMEOUT_SECONDS, TimeUnit.SECONDS)) {
      process.destroyForcibly().waitFor();
      throw new IllegalStateException("timed out after " + TIMEOUT_SECONDS + " s: " + application);
    }
    return RunningApp.finished(process, launch.out, launch.err, launch.report, launch.dir);
  }

  /** A started child JVM and where its output goes. */
  private static final class Launch {
    final Process process;
    final Path dir;
    final Path out;
    final Path err;
    final Path report;

    Launch(Process process, Path dir, Path out, Path err, Path report) {
      this.process = process;
      this.dir = dir;
      this.out = out;
      this.err = err;
      this.report = report;
    }
  }

  private Launch launch(List<String> application) throws IOException {
    if (!Files.isRegularFile(AGENT_JAR)) {
      throw new IllegalStateException(
          AGENT_JAR + " is missing: build the project first ('mvn install -DskipTests')");
    }
    Path dir = Paths.get(System.getProperty("nativemem.test.workdir", "target/runs"), name);
    Files.createDirectories(dir);
    Path report = dir.resolve("handles.json");
    Path out = dir.resolve("stdout.txt");
    Path err = dir.resolve("stderr.txt");
    for (Path old : new Path[] {report, out, err}) {
      Files.deleteIfExists(old); // ours, from an earlier run of this test
    }
    List<String> command = new ArrayList<>(launcher);
    command.add(JAVA);
    if (agent) {
      command.add("-javaagent:" + AGENT_JAR + "=" + level + "report=" + report);
    }
    command.addAll(jvmArgs);
    command.add("-XX:ErrorFile=" + dir.toAbsolutePath().resolve("hs_err_pid%p.log"));
    command.add("-Djava.io.tmpdir=" + Files.createDirectories(dir.resolve("tmp")));
    command.addAll(application);
    ProcessBuilder builder =
        new ProcessBuilder(command)
            .directory(dir.toFile())
            .redirectOutput(out.toFile())
            .redirectError(err.toFile());
    builder.environment().remove("LD_PRELOAD");
    builder.environment().remove("MALLOC_CONF");
    builder.environment().remove("JAVA_TOOL_OPTIONS");
    builder.environment().putAll(environment);
    return new Launch(builder.start(), dir, out, err, report);
  }
}
