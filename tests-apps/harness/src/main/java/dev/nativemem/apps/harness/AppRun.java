package dev.nativemem.apps.harness;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** What a child JVM printed, its exit code, and the agent's report file. */
public final class AppRun {
  private final int exitCode;
  private final String stdout;
  private final String stderr;
  private final Path report;
  private final String crashLog;

  AppRun(int exitCode, String stdout, String stderr, Path report, String crashLog) {
    this.exitCode = exitCode;
    this.stdout = stdout;
    this.stderr = stderr;
    this.report = report;
    this.crashLog = crashLog;
  }

  public int exitCode() {
    return exitCode;
  }

  public String stdout() {
    return stdout;
  }

  public String stderr() {
    return stderr;
  }

  /** Whether the JVM crashed with every one of {@code frames} in its error report. */
  public boolean crashedIn(String... frames) {
    for (String frame : frames) {
      if (!crashLog.contains(frame)) {
        return false;
      }
    }
    return !crashLog.isEmpty();
  }

  /** The number the application printed on its line {@code "<key> <number>"}. */
  public long counter(String key) {
    Matcher m = Pattern.compile("(?m)^" + Pattern.quote(key) + " (\\d+)$").matcher(stdout);
    if (!m.find()) {
      throw new AssertionError("the application printed no '" + key + " <n>' line\n" + this);
    }
    return Long.parseLong(m.group(1));
  }

  /** How many lines of stdout and stderr contain {@code text} (a framework's log lines). */
  public long lines(String text) {
    return (stdout + "\n" + stderr).lines().filter(l -> l.contains(text)).count();
  }

  /** The agent's JSON report, written at exit. */
  public AgentReport report() throws IOException {
    if (!Files.isRegularFile(report)) {
      throw new AssertionError("the agent wrote no report at " + report + "\n" + this);
    }
    return AgentReport.parse(Files.readString(report));
  }

  @Override
  public String toString() {
    return "exit "
        + exitCode
        + " (report "
        + report
        + ")\n--- stdout (tail)\n"
        + tail(stdout)
        + "\n--- stderr (tail)\n"
        + tail(stderr);
  }

  private static String tail(String text) {
    return text.length() <= 6000 ? text : "..." + text.substring(text.length() - 6000);
  }
}
