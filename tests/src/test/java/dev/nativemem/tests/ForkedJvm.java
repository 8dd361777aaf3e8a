package dev.nativemem.tests;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/** Runs a child JVM against the built jar and captures what it printed. */
final class ForkedJvm {
  /** The jar as the build left it, beside its -debug jar and classes. */
  static final Path BUILT_JAR =
      Paths.get(System.getProperty("nativemem.jar", "missing-nativemem.jar"));

  /** The jar, where JVMs of another uid can read it too ({@link OtherUsers}). */
  static final Path JAR = OtherUsers.readable(BUILT_JAR);

  /** The nativemem-demo jar: the CLI with the demo's classes (the core jar's CLI has no demo). */
  static final Path DEMO_JAR =
      Paths.get(System.getProperty("nativemem.demo.jar", "missing-nativemem-demo.jar"));

  static final String JAVA = Paths.get(System.getProperty("java.home"), "bin", "java").toString();
  static final Path DEBIAN_JEMALLOC = Paths.get("/usr/lib/x86_64-linux-gnu/libjemalloc.so.2");

  /** The project's preload allocator, as the build left it beside the jar's classes. */
  static final Path OWN_JEMALLOC =
      BUILT_JAR
          .toAbsolutePath()
          .getParent()
          .resolve("classes/dev/nativemem/native/linux-x86_64/libnativemem_jemalloc.so");

  /** This module's compiled tests, for child JVMs that run a probe class of the tests. */
  static final String TEST_CLASSES = readable(System.getProperty("nativemem.test.classes", ""));

  private final List<String> jvmArgs = new ArrayList<>();
  private final Map<String, String> env = new HashMap<>();
  private final List<String> launcher = new ArrayList<>();
  private final List<String> classPath = new ArrayList<>();
  private String launcherJava = JAVA;
  private long timeoutSeconds = 120;

  /** Whether {@code tool} is an executable on {@code PATH}. */
  static boolean onPath(String tool) {
    for (String path : System.getenv().getOrDefault("PATH", "").split(":")) {
      if (Files.isExecutable(Paths.get(path, tool))) {
        return true;
      }
    }
    return false;
  }

  /** Adds this module's test classes to the child's class path (for probe main classes). */
  ForkedJvm withTestClasses() {
    classPath.add(TEST_CLASSES);
    return this;
  }

  /** Runs this {@code java} launcher instead of the one running the tests. */
  ForkedJvm java(Path launcher) {
    launcherJava = launcher.toString();
    return this;
  }

  /** Waits this long for the child (120 s unless set) before killing it and failing. */
  ForkedJvm timeout(long seconds) {
    timeoutSeconds = seconds;
    return this;
  }

  ForkedJvm jvmArg(String... args) {
    jvmArgs.addAll(Arrays.asList(args));
    return this;
  }

  ForkedJvm env(String key, String value) {
    env.put(key, value);
    return this;
  }

  /** Runs {@code java} through this command, e.g. a shell that first joins a cgroup. */
  ForkedJvm launcher(String... command) {
    launcher.addAll(Arrays.asList(command));
    return this;
  }

  /** Adds an entry after the jar on the class path of {@link #main}. */
  ForkedJvm classPath(Path entry) {
    classPath.add(entry.toString());
    return this;
  }

  /** {@code java <jvmArgs> -jar nativemem.jar <args>}. */
  Result cli(String... args) throws IOException, InterruptedException {
    return jar(JAR, args);
  }

  /** {@code java <jvmArgs> -jar <jar> <args>}. */
  Result jar(Path jar, String... args) throws IOException, InterruptedException {
    List<String> command = new ArrayList<>(jvmArgs);
    command.add("-jar");
    command.add(jar.toString());
    command.addAll(Arrays.asList(args));
    return run(command);
  }

  /** {@code java <jvmArgs> -cp nativemem.jar <mainClass> <args>}. */
  Result main(String mainClass, String... args) throws IOException, InterruptedException {
    List<String> command = new ArrayList<>(jvmArgs);
    command.add("-cp");
    List<String> entries = new ArrayList<>();
    entries.add(JAR.toString());
    entries.addAll(classPath);
    command.add(String.join(java.io.File.pathSeparator, entries));
    command.add(mainClass);
    command.addAll(Arrays.asList(args));
    return run(command);
  }

  /**
   * {@code java <jvmArgs> -cp <entries added> <mainClass> <args>}: nativemem only where a jvmArg
   * puts it (an agent's own jar, say).
   */
  Result mainWithoutJar(String mainClass, String... args) throws IOException, InterruptedException {
    List<String> command = new ArrayList<>(jvmArgs);
    command.add("-cp");
    command.add(String.join(java.io.File.pathSeparator, classPath));
    command.add(mainClass);
    command.addAll(Arrays.asList(args));
    return run(command);
  }

  /** {@code java <jvmArgs> -p nativemem.jar[:modules] <args>}: the jar as a named module. */
  Result modulePath(List<Path> modules, String... args) throws IOException, InterruptedException {
    List<String> command = new ArrayList<>(jvmArgs);
    List<String> entries = new ArrayList<>();
    entries.add(JAR.toString());
    modules.forEach(m -> entries.add(m.toString()));
    command.add("-p");
    command.add(String.join(java.io.File.pathSeparator, entries));
    command.addAll(Arrays.asList(args));
    return run(command);
  }

  private Result run(List<String> args) throws IOException, InterruptedException {
    if (!Files.isRegularFile(JAR)) {
      throw new IllegalStateException(JAR + " is missing: run 'mvn verify' from the project root");
    }
    List<String> command = new ArrayList<>(launcher);
    command.add(launcherJava);
    command.addAll(args);
    Path out = Files.createTempFile("nativemem-out", ".txt");
    Path err = Files.createTempFile("nativemem-err", ".txt");
    ProcessBuilder builder =
        new ProcessBuilder(command).redirectOutput(out.toFile()).redirectError(err.toFile());
    builder.environment().remove("LD_PRELOAD");
    builder.environment().remove("MALLOC_CONF");
    builder.environment().putAll(env);
    Process process = builder.start();
    if (!process.waitFor(timeoutSeconds, TimeUnit.SECONDS)) {
      process.destroyForcibly();
      throw new IllegalStateException("timed out: " + command);
    }
    Result result =
        new Result(
            process.exitValue(),
            new String(Files.readAllBytes(out), StandardCharsets.UTF_8),
            new String(Files.readAllBytes(err), StandardCharsets.UTF_8));
    Files.delete(out);
    Files.delete(err);
    return result;
  }

  static final class Result {
    final int exitCode;
    final String stdout;
    final String stderr;

    Result(int exitCode, String stdout, String stderr) {
      this.exitCode = exitCode;
      this.stdout = stdout;
      this.stderr = stderr;
    }

    @Override
    public String toString() {
      return "exit " + exitCode + "\n--- stdout\n" + stdout + "\n--- stderr\n" + stderr;
    }
  }

  /** A class path entry where JVMs of another uid can read it too; empty stays empty. */
  private static String readable(String entry) {
    return entry.isEmpty() ? entry : OtherUsers.readable(Paths.get(entry)).toString();
  }
}
