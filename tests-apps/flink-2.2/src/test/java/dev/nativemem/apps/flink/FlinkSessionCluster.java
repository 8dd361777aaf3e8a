package dev.nativemem.apps.flink;

import dev.nativemem.apps.harness.AppJvm;
import dev.nativemem.apps.harness.AppRun;
import dev.nativemem.apps.harness.RunningApp;
import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * A Flink session cluster of a JobManager and a TaskManager JVM, each started as Flink's scripts
 * start them ({@code jobmanager.sh}, {@code taskmanager.sh} through {@code config.sh} and {@code
 * flink-daemon.sh}): the JVM options of {@code env.java.opts.all} and of the process's own key read
 * from {@code config.yaml}, the memory options and dynamic properties Flink's {@code BashJavaUtils}
 * computes from it, log4j writing {@code log/flink-<process>.log}, {@code --configDir}. The class
 * path is Flink's {@code lib/} of this module: the Flink 2.2.1 jars Maven resolved, log4j 2 (as
 * flink-dist ships it) and the nativemem jar. Jobs are submitted as with {@code flink run -d}.
 */
final class FlinkSessionCluster implements AutoCloseable {
  static final String TASK_MANAGER_RUNNER =
      "org.apache.flink.runtime.taskexecutor.TaskManagerRunner";
  static final String SESSION_ENTRYPOINT =
      "org.apache.flink.runtime.entrypoint.StandaloneSessionClusterEntrypoint";

  /** Flink's {@code config.yaml}: the options Java 17 needs, as Flink's distribution sets them. */
  static final String JAVA_17_OPTIONS =
      "--add-exports=java.base/sun.net.util=ALL-UNNAMED"
          + " --add-exports=java.rmi/sun.rmi.registry=ALL-UNNAMED"
          + " --add-exports=jdk.compiler/com.sun.tools.javac.api=ALL-UNNAMED"
          + " --add-exports=jdk.compiler/com.sun.tools.javac.file=ALL-UNNAMED"
          + " --add-exports=jdk.compiler/com.sun.tools.javac.parser=ALL-UNNAMED"
          + " --add-exports=jdk.compiler/com.sun.tools.javac.tree=ALL-UNNAMED"
          + " --add-exports=jdk.compiler/com.sun.tools.javac.util=ALL-UNNAMED"
          + " --add-exports=java.security.jgss/sun.security.krb5=ALL-UNNAMED"
          + " --add-opens=java.base/java.lang=ALL-UNNAMED"
          + " --add-opens=java.base/java.net=ALL-UNNAMED"
          + " --add-opens=java.base/java.io=ALL-UNNAMED"
          + " --add-opens=java.base/java.nio=ALL-UNNAMED"
          + " --add-opens=java.base/sun.nio.ch=ALL-UNNAMED"
          + " --add-opens=java.base/java.lang.reflect=ALL-UNNAMED"
          + " --add-opens=java.base/java.text=ALL-UNNAMED"
          + " --add-opens=java.base/java.time=ALL-UNNAMED"
          + " --add-opens=java.base/java.util=ALL-UNNAMED"
          + " --add-opens=java.base/java.util.concurrent=ALL-UNNAMED";

  /**
   * Flink's {@code conf/log4j.properties} (the rolling file at {@code log.file}, its layout), with
   * the manual compaction's DEBUG line ("Manually compacting") that the test counts.
   */
  static final String LOG4J =
      String.join(
          "\n",
          "monitorInterval=30",
          "rootLogger.level = INFO",
          "rootLogger.appenderRef.file.ref = MainAppender",
          "logger.compactor.name = org.apache.flink.state.rocksdb.sstmerge.Compactor",
          "logger.compactor.level = DEBUG",
          "appender.main.name = MainAppender",
          "appender.main.type = RollingFile",
          "appender.main.append = true",
          "appender.main.fileName = ${sys:log.file}",
          "appender.main.filePattern = ${sys:log.file}.%i",
          "appender.main.layout.type = PatternLayout",
          "appender.main.layout.pattern = %d{yyyy-MM-dd HH:mm:ss,SSS} %-5p %-60c %x - %m%n",
          "appender.main.policies.type = Policies",
          "appender.main.policies.size.type = SizeBasedTriggeringPolicy",
          "appender.main.policies.size.size = 100MB",
          "appender.main.policies.startup.type = OnStartupTriggeringPolicy",
          "appender.main.strategy.type = DefaultRolloverStrategy",
          "appender.main.strategy.max = 10",
          "");

  final String name;
  final Path home;
  final Path conf;
  final Path log;
  final String classPath;
  private final List<RunningApp> processes = new ArrayList<>();

  private FlinkSessionCluster(String name, Path home, String classPath) {
    this.name = name;
    this.home = home;
    this.conf = home.resolve("conf");
    this.log = home.resolve("log");
    this.classPath = classPath;
  }

  /**
   * A cluster's directories ({@code conf/} with {@code config.yaml} of {@code settings} lines and
   * the log4j configuration, {@code log/}) under the module's {@code target/runs/<name>}, emptied.
   */
  static FlinkSessionCluster configure(String name, List<String> settings) throws IOException {
    Path runs = Paths.get(System.getProperty("nativemem.test.workdir", "target/runs"));
    Path home = runs.resolve(name);
    deleteTree(home);
    // What an earlier TaskManager killed here left in its temporary directory (RocksDB's files).
    deleteTree(runs.resolve(name + "-taskmanager").resolve("tmp"));
    FlinkSessionCluster cluster = new FlinkSessionCluster(name, home.toAbsolutePath(), lib());
    Files.createDirectories(cluster.conf);
    Files.createDirectories(cluster.log);
    List<String> yaml = new ArrayList<>();
    yaml.add("jobmanager.rpc.address: localhost");
    yaml.add("jobmanager.rpc.port: " + freePort());
    yaml.add("jobmanager.bind-host: localhost");
    yaml.add("taskmanager.bind-host: localhost");
    yaml.add("taskmanager.host: localhost");
    yaml.add("rest.address: localhost");
    yaml.add("rest.bind-address: localhost");
    yaml.add("rest.port: " + freePort());
    yaml.add("env.java.opts.all: " + JAVA_17_OPTIONS);
    yaml.addAll(settings);
    Files.writeString(cluster.conf.resolve("config.yaml"), String.join("\n", yaml) + "\n");
    Files.writeString(cluster.conf.resolve("log4j.properties"), LOG4J);
    Files.writeString(cluster.conf.resolve("log4j-cli.properties"), LOG4J);
    return cluster;
  }

  /**
   * Flink's {@code lib/} as this module has it: the Flink jars Maven resolved for the job (without
   * the job's own SLF4J backend), log4j 2 and nativemem's jar.
   */
  private static String lib() throws IOException {
    List<String> jars = new ArrayList<>();
    for (String jar :
        Files.readString(Paths.get(System.getProperty("job.classpath.file")))
            .trim()
            .split(File.pathSeparator)) {
      if (!jar.contains("slf4j-simple")) {
        jars.add(jar);
      }
    }
    try (Stream<Path> logging = Files.list(Paths.get(System.getProperty("flink.lib.logging")))) {
      logging.map(Path::toString).sorted().forEach(jars::add);
    }
    jars.add(System.getProperty("nativemem.jar"));
    return String.join(File.pathSeparator, jars);
  }

  /** A value of {@code config.yaml} as Flink's {@code config.sh} reads it (the last one). */
  String setting(String key) throws IOException {
    String value = "";
    for (String line : Files.readAllLines(conf.resolve("config.yaml"))) {
      if (line.startsWith(key + ":")) {
        value = line.substring(key.length() + 1).trim();
      }
    }
    return value;
  }

  /** {@code -Dlog.file=...} and the logging configurations, as {@code flink-daemon.sh} gives. */
  private List<String> logSettings(String process) {
    String properties = "file:" + conf.resolve("log4j.properties");
    return List.of(
        "-Dlog.file=" + log.resolve("flink-" + process + ".log"),
        "-Dlog4j.configuration=" + properties,
        "-Dlog4j.configurationFile=" + properties,
        "-Dlogback.configurationFile=file:" + conf.resolve("logback.xml"));
  }

  /**
   * {@code BashJavaUtils <command> --configDir conf}: the JVM's memory options (first) and the
   * dynamic properties (second), as {@code config.sh} runs it.
   */
  private List<List<String>> resourceParams(String command) throws Exception {
    AppRun run =
        new AppJvm(name + "-" + command.toLowerCase(java.util.Locale.ROOT))
            .withoutAgent()
            .main(
                classPath,
                "org.apache.flink.runtime.util.bash.BashJavaUtils",
                command,
                "--configDir",
                conf.toString());
    List<List<String>> results =
        run.stdout()
            .lines()
            .filter(l -> l.startsWith("BASH_JAVA_UTILS_EXEC_RESULT:"))
            .map(l -> words(l.substring("BASH_JAVA_UTILS_EXEC_RESULT:".length())))
            .collect(Collectors.toList());
    if (run.exitCode() != 0 || results.size() != 2) {
      throw new IllegalStateException("BashJavaUtils " + command + " failed:\n" + run);
    }
    return results;
  }

  /** {@code jobmanager.sh start}: the session cluster's entry point, outside any cgroup. */
  RunningApp startJobManager() throws Exception {
    List<List<String>> params = resourceParams("GET_JM_RESOURCE_PARAMS");
    List<String> args =
        new ArrayList<>(List.of("--configDir", conf.toString(), "--executionMode", "cluster"));
    args.addAll(params.get(1));
    return start(
        new AppJvm(name + "-jobmanager"),
        "jobmanager",
        params.get(0),
        setting("env.java.opts.jobmanager"),
        SESSION_ENTRYPOINT,
        args);
  }

  /**
   * {@code taskmanager.sh start}, its JVM started through {@code jvm} (a launcher, environment
   * variables such as {@code LD_PRELOAD}).
   */
  RunningApp startTaskManager(AppJvm jvm) throws Exception {
    List<List<String>> params = resourceParams("GET_TM_RESOURCE_PARAMS");
    List<String> args = new ArrayList<>(List.of("--configDir", conf.toString()));
    args.addAll(params.get(1));
    return start(
        jvm,
        "taskmanager",
        params.get(0),
        setting("env.java.opts.taskmanager"),
        TASK_MANAGER_RUNNER,
        args);
  }

  private RunningApp start(
      AppJvm jvm,
      String process,
      List<String> memory,
      String processOptions,
      String mainClass,
      List<String> args)
      throws IOException {
    // flink-daemon.sh: $JVM_ARGS (the memory options) ${FLINK_ENV_JAVA_OPTS} (config.sh puts
    // -XX:+IgnoreUnrecognizedVMOptions before env.java.opts.all; the process's key follows)
    jvm.withoutAgent().jvmArg(memory.toArray(new String[0]));
    jvm.jvmArg("-XX:+IgnoreUnrecognizedVMOptions");
    jvm.jvmArg(words(setting("env.java.opts.all")).toArray(new String[0]));
    jvm.jvmArg(words(processOptions).toArray(new String[0]));
    jvm.jvmArg(logSettings(process).toArray(new String[0]));
    RunningApp app = jvm.startMain(classPath, mainClass, args.toArray(new String[0]));
    processes.add(app);
    return app;
  }

  /**
   * {@code flink run -d -c <mainClass> <jar> <args>}: submits the job to the cluster (the client
   * retries until the JobManager's REST endpoint is up) and returns once it is submitted.
   */
  AppRun submit(Path jar, String mainClass, String... args) throws Exception {
    List<String> cli = new ArrayList<>(List.of("run", "-d", "-c", mainClass, jar.toString()));
    cli.addAll(Arrays.asList(args));
    AppJvm client =
        new AppJvm(name + "-client")
            .withoutAgent()
            .env("FLINK_CONF_DIR", conf.toString())
            .jvmArg("-XX:+IgnoreUnrecognizedVMOptions")
            .jvmArg(words(setting("env.java.opts.all")).toArray(new String[0]))
            .jvmArg(
                "-Dlog.file=" + log.resolve("flink-client.log"),
                "-Dlog4j.configurationFile=file:" + conf.resolve("log4j-cli.properties"));
    return client.main(
        classPath, "org.apache.flink.client.cli.CliFrontend", cli.toArray(new String[0]));
  }

  /** The log4j file of {@code process} ({@code taskmanager}, {@code jobmanager}). */
  Path logFile(String process) {
    return log.resolve("flink-" + process + ".log");
  }

  @Override
  public void close() throws Exception {
    for (RunningApp app : processes) {
      app.close();
    }
  }

  private static List<String> words(String text) {
    return Arrays.stream(text.trim().split("\\s+"))
        .filter(w -> !w.isEmpty())
        .collect(Collectors.toList());
  }

  private static int freePort() throws IOException {
    try (ServerSocket socket = new ServerSocket(0)) {
      return socket.getLocalPort();
    }
  }

  private static void deleteTree(Path dir) throws IOException {
    if (!Files.exists(dir)) {
      return;
    }
    try (Stream<Path> all = Files.walk(dir)) {
      for (Path p : all.sorted(Comparator.reverseOrder()).collect(Collectors.toList())) {
        try {
          Files.delete(p);
        } catch (IOException e) {
          throw new UncheckedIOException("cannot clean " + dir, e);
        }
      }
    }
  }
}
