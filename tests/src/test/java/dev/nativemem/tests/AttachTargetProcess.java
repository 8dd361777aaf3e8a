package dev.nativemem.tests;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/** A running {@link AttachTarget}, talked to through its stdin and stdout. */
final class AttachTargetProcess implements AutoCloseable {
  final Process process;
  final long pid;
  private final BufferedReader out;
  private final Writer in;
  private final Path stderr;

  AttachTargetProcess(List<String> classPath, String... env) throws IOException {
    this(List.of(), List.of(), classPath, env);
  }

  /**
   * Started through {@code launcher} (e.g. {@code setpriv ...}, {@code unshare ...}) with {@code
   * jvmArgs}; {@link #pid} is the JVM's pid as this process sees it.
   */
  AttachTargetProcess(
      List<String> launcher, List<String> jvmArgs, List<String> classPath, String... env)
      throws IOException {
    this(ForkedJvm.JAVA, launcher, jvmArgs, classPath, env);
  }

  /** As above, run by the {@code java} launcher at {@code launcherPath} (another JDK). */
  AttachTargetProcess(
      String launcherPath,
      List<String> launcher,
      List<String> jvmArgs,
      List<String> classPath,
      String... env)
      throws IOException {
    List<String> command = new ArrayList<>(launcher);
    command.add(launcherPath);
    command.addAll(jvmArgs);
    command.add("-cp");
    command.add(String.join(java.io.File.pathSeparator, classPath));
    command.add(AttachTarget.class.getName());
    stderr = Files.createTempFile("attach-target", ".err");
    ProcessBuilder builder = new ProcessBuilder(command).redirectError(stderr.toFile());
    builder.environment().remove("LD_PRELOAD");
    builder.environment().remove("MALLOC_CONF");
    for (int i = 0; i + 1 < env.length; i += 2) {
      builder.environment().put(env[i], env[i + 1]);
    }
    process = builder.start();
    out =
        new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
    in = new java.io.OutputStreamWriter(process.getOutputStream(), StandardCharsets.UTF_8);
    long own = Long.parseLong(answer("READY ").substring("READY ".length()));
    // Through a launcher in another pid namespace the JVM sees another pid: take its host pid.
    pid =
        launcher.isEmpty()
            ? own
            : process
                .descendants()
                .filter(p -> p.info().command().orElse("").endsWith("/java"))
                .mapToLong(ProcessHandle::pid)
                .findFirst()
                .orElse(process.pid());
  }

  /** Sends a line, returns the first output line starting with {@code prefix}. */
  String send(String line, String prefix) throws IOException {
    in.write(line + "\n");
    in.flush();
    return answer(prefix);
  }

  private String answer(String prefix) throws IOException {
    for (String line = out.readLine(); line != null; line = out.readLine()) {
      if (line.startsWith(prefix)) {
        return line;
      }
    }
    throw new IOException(
        "the target ended before printing '" + prefix + "': " + Files.readString(stderr));
  }

  /** What the target wrote to its standard error so far. */
  String stderr() throws IOException {
    return Files.readString(stderr);
  }

  @Override
  public void close() throws Exception {
    process.descendants().forEach(ProcessHandle::destroy);
    process.destroy();
    if (!process.waitFor(10, TimeUnit.SECONDS)) {
      process.descendants().forEach(ProcessHandle::destroyForcibly);
      process.destroyForcibly();
    }
    Files.deleteIfExists(stderr);
  }
}
