package dev.nativemem.tests.handles;

import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;

/** Runs {@link HandleScenarios} in a child JVM, with or without the agent, on a chosen RocksDB. */
final class ScenarioJvm {
  static final Path JAR = Paths.get(System.getProperty("nativemem.jar", "missing-nativemem.jar"));
  static final String JAVA = Paths.get(System.getProperty("java.home"), "bin", "java").toString();

  private final List<String> jvmArgs = new ArrayList<>();
  private Path rocksdbJar = codeSource(org.rocksdb.RocksDB.class);
  private String mainClass = HandleScenarios.class.getName();
  private Path scenarioClasses = codeSource(HandleScenarios.class);
  private final List<String> extraClasspath = new ArrayList<>();

  static Path codeSource(Class<?> type) {
    try {
      return Paths.get(type.getProtectionDomain().getCodeSource().getLocation().toURI());
    } catch (Exception e) {
      throw new IllegalStateException("no code source for " + type, e);
    }
  }

  ScenarioJvm jvmArg(String... args) {
    jvmArgs.addAll(Arrays.asList(args));
    return this;
  }

  ScenarioJvm agent(String options) {
    return jvmArg("-javaagent:" + JAR + (options.isEmpty() ? "" : "=" + options));
  }

  /** Runs {@code name} instead of {@link HandleScenarios}. */
  ScenarioJvm mainClass(String name) {
    this.mainClass = name;
    return this;
  }

  /** Adds entries after the scenario classes, nativemem and RocksDB. */
  ScenarioJvm classpath(String... entries) {
    extraClasspath.addAll(Arrays.asList(entries));
    return this;
  }

  /** Takes the scenario classes from {@code jar} (a CDS archive takes no directory). */
  ScenarioJvm scenarioClasses(Path jar) {
    this.scenarioClasses = jar;
    return this;
  }

  ScenarioJvm rocksdb(Path jar) {
    this.rocksdbJar = jar;
    return this;
  }

  Result run(String... args) throws Exception {
    if (!Files.isRegularFile(JAR)) {
      throw new IllegalStateException(JAR + " is missing: run 'mvn verify' from the project root");
    }
    List<String> entries = new ArrayList<>();
    entries.add(scenarioClasses.toString());
    entries.add(JAR.toString());
    entries.add(rocksdbJar.toString());
    entries.addAll(extraClasspath);
    String classpath = String.join(File.pathSeparator, entries);
    List<String> command = new ArrayList<>();
    command.add(JAVA);
    command.addAll(jvmArgs);
    command.add("-cp");
    command.add(classpath);
    command.add(mainClass);
    command.addAll(Arrays.asList(args));
    Path out = Files.createTempFile("scenario-out", ".txt");
    Path err = Files.createTempFile("scenario-err", ".txt");
    try {
      Process process =
          new ProcessBuilder(command)
              .redirectOutput(out.toFile())
              .redirectError(err.toFile())
              .start();
      if (!process.waitFor(300, TimeUnit.SECONDS)) {
        process.destroyForcibly();
        throw new IllegalStateException("timed out: " + command);
      }
      return new Result(
          process.exitValue(),
          Files.readString(out, StandardCharsets.UTF_8),
          Files.readString(err, StandardCharsets.UTF_8));
    } finally {
      Files.deleteIfExists(out);
      Files.deleteIfExists(err);
    }
  }

  record Result(int exitCode, String stdout, String stderr) {
    /** The value printed on the line starting with {@code key + " "}. */
    String value(String key) {
      for (String line : stdout.split("\n")) {
        if (line.startsWith(key + " ")) {
          return line.substring(key.length() + 1);
        }
      }
      throw new AssertionError("no line '" + key + "' in\n" + this);
    }

    @Override
    public String toString() {
      return "exit " + exitCode + "\n--- stdout\n" + stdout + "\n--- stderr\n" + stderr;
    }
  }
}
