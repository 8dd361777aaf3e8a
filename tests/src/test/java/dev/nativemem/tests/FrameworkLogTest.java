package dev.nativemem.tests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.jr.ob.JSON;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Where the application logs through SLF4J bound to log4j 2 (Flink's {@code lib/}: slf4j-api, the
 * log4j binding, log4j-core and -api from Maven), nativemem's messages and the verdict are in the
 * file log4j writes, under {@code dev.nativemem...} loggers, with Flink's own layout; standard
 * error keeps the verdict lines too.
 */
class FrameworkLogTest {
  /** The layout of Flink's {@code log4j.properties}. */
  private static final String FLINK_PATTERN = "%d{yyyy-MM-dd HH:mm:ss,SSS} %-5p %-60c %x - %m%n";

  @TempDir Path temp;

  @Test
  void theVerdictIsInTheFrameworksLogFile() throws Exception {
    Path lib = Paths.get(System.getProperty("nativemem.log4j2.slf4j", "missing-log4j2-slf4j"));
    assertTrue(Files.isDirectory(lib), lib + ": the build copies the logging jars there");
    Path logFile = temp.resolve("flink-taskmanager.log");
    Path config = temp.resolve("log4j2.properties");
    Files.writeString(
        config,
        "rootLogger.level = INFO\n"
            + "rootLogger.appenderRef.file.ref = MainAppender\n"
            + "appender.main.name = MainAppender\n"
            + "appender.main.type = File\n"
            + "appender.main.fileName = "
            + logFile
            + "\n"
            + "appender.main.layout.type = PatternLayout\n"
            + "appender.main.layout.pattern = "
            + FLINK_PATTERN
            + "\n");
    Path incidents = temp.resolve("incidents");
    ForkedJvm.Result r =
        new ForkedJvm()
            .withTestClasses()
            .classPath(Paths.get(lib + "/*"))
            .jvmArg(
                "-Dlog4j.configurationFile=" + config,
                "-javaagent:" + ForkedJvm.JAR + "=watch=on,watch.dir=" + incidents)
            .main(FrameworkLogChild.class.getName());
    assertEquals(0, r.exitCode, r.toString());
    String bundle = r.stdout.substring(r.stdout.indexOf("BUNDLE ") + 7).trim();
    assertTrue(Files.isDirectory(Paths.get(bundle)), r.toString());

    String file = Files.readString(logFile, StandardCharsets.UTF_8);
    List<String> verdict = new ArrayList<>();
    boolean watchStarted = false;
    for (String line : file.split("\n")) {
      int message = line.indexOf(" - ");
      if (message < 0) {
        continue;
      }
      // date, time, level, logger, then the (empty) context and " - " before the message
      String[] fields = line.split("\\s+", 5);
      String level = fields[2];
      String logger = fields[3];
      String text = line.substring(message + 3);
      if (text.startsWith(IncidentLogLines.PREFIX)
          || text.startsWith(IncidentLogLines.JSON_PREFIX)) {
        assertEquals("dev.nativemem.incident", logger, line);
        assertEquals("WARN", level, line);
        verdict.add(text);
      }
      watchStarted |=
          logger.equals("dev.nativemem.watch") && text.startsWith("nativemem memory watch started");
    }
    assertTrue(watchStarted, "the watch's own message is in the file:\n" + file);
    IncidentLogLines inFile = new IncidentLogLines(String.join("\n", verdict));
    assertEquals(1, inFile.json.size(), String.join("\n", verdict));
    Map<String, Object> json = JSON.std.mapFrom(inFile.json.get(0));
    assertEquals(bundle, json.get("bundle"));
    Map<String, Object> manifest =
        JSON.std.mapFrom(Files.readString(Paths.get(bundle, "manifest.json")));
    assertEquals(manifest.get("pid"), json.get("pid"));
    assertTrue(
        inFile.human.stream()
            .anyMatch(l -> l.startsWith(IncidentLogLines.PREFIX + "incident in pid ")),
        String.join("\n", verdict));
    assertTrue(
        inFile.human.stream()
            .anyMatch(
                l ->
                    l.equals(
                        IncidentLogLines.PREFIX
                            + "bundle complete: "
                            + bundle
                            + " (captured in "
                            + manifest.get("capture_ms")
                            + " ms)")),
        String.join("\n", verdict));

    // Standard error (a container's log) keeps the same verdict lines.
    List<String> onStderr = new ArrayList<>();
    for (String line : r.stderr.split("\n")) {
      if (line.startsWith(IncidentLogLines.PREFIX)
          || line.startsWith(IncidentLogLines.JSON_PREFIX)) {
        onStderr.add(line);
      }
    }
    assertEquals(verdict, onStderr, r.stderr);
    assertFalse(
        r.stderr.contains("nativemem memory watch started"),
        "the watch's messages go to the framework's log, not to java.util.logging's stderr");
  }
}
