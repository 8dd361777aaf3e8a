package dev.nativemem.apps.harness;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** A child JVM started by {@link AppJvm#start}: still running until {@link #stop()}. */
public final class RunningApp implements AutoCloseable {
  private static final long STOP_SECONDS = 60;

  private final Process process;
  private final Path out;
  private final Path err;
  private final Path report;
  private final Path dir;

  RunningApp(Process process, Path out, Path err, Path report, Path dir) {
    this.process = process;
    this.out = out;
    this.err = err;
    this.report = report;
    this.dir = dir;
  }

  /**
   * Waits until the application prints a line {@code "<key> <number>"} (such as the port it listens
   * on) and returns the number.
   *
   * @throws IllegalStateException if it exits first or prints none within {@code timeout}
   */
  public long awaitCounter(String key, Duration timeout) throws IOException, InterruptedException {
    Pattern line = Pattern.compile("(?m)^" + Pattern.quote(key) + " (\\d+)$");
    long deadline = System.nanoTime() + timeout.toNanos();
    while (System.nanoTime() < deadline) {
      Matcher m = line.matcher(Files.readString(out, StandardCharsets.UTF_8));
      if (m.find()) {
        return Long.parseLong(m.group(1));
      }
      if (!process.isAlive()) {
        throw new IllegalStateException(
            "exited before printing '"
                + key
                + " <n>':\n"
                + finished(process, out, err, report, dir));
      }
      Thread.sleep(100);
    }
    throw new IllegalStateException("no '" + key + " <n>' within " + timeout);
  }

  /** The child's process id (that of the launcher, which execs the JVM, where there is one). */
  public long pid() {
    return process.pid();
  }

  /** The directory the child runs in (its output, its {@code tmp}). */
  public Path dir() {
    return dir;
  }

  /**
   * Waits up to {@code timeout} for the application to exit by itself and returns when it was seen
   * to exit ({@link System#currentTimeMillis()}, within about 10 ms), or -1 if it still runs.
   */
  public long awaitExit(Duration timeout) throws InterruptedException {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (System.nanoTime() < deadline) {
      if (process.waitFor(10, TimeUnit.MILLISECONDS)) {
        return System.currentTimeMillis();
      }
    }
    return -1;
  }

  /** Stops the application (SIGTERM, then SIGKILL after a minute); what it printed. */
  public AppRun stop() throws IOException, InterruptedException {
    process.destroy();
    if (!process.waitFor(STOP_SECONDS, TimeUnit.SECONDS)) {
      process.destroyForcibly().waitFor();
    }
    return finished(process, out, err, report, dir);
  }

  @Override
  public void close() throws IOException, InterruptedException {
    if (process.isAlive()) {
      stop();
    }
  }

  static AppRun finished(Process process, Path out, Path err, Path report, Path dir)
      throws IOException {
    Path crashLog = dir.resolve("hs_err_pid" + process.pid() + ".log");
    return new AppRun(
        process.isAlive() ? -1 : process.exitValue(),
        Files.readString(out, StandardCharsets.UTF_8),
        Files.readString(err, StandardCharsets.UTF_8),
        report,
        Files.isRegularFile(crashLog)
            ? Files.readString(crashLog, StandardCharsets.ISO_8859_1)
            : "");
  }
}
