package dev.nativemem.apps.spring;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.nativemem.apps.harness.AppJvm;
import dev.nativemem.apps.harness.AppRun;
import dev.nativemem.apps.harness.RunningApp;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * In a Spring Boot executable jar the application's SLF4J (Logback, in {@code BOOT-INF/lib}) is
 * seen only by Spring Boot's launcher's class loader, not by the system class loader the agent is
 * on: nativemem's lines, the incident verdict among them, still reach the application's Logback
 * output under {@code dev.nativemem} loggers, and standard error keeps the verdict as before.
 */
class SpringBootLogTest {
  private static final Path APP = Paths.get(System.getProperty("app.jar", "missing-app.jar"));

  /** Logback's console lines, in a pattern of the application's that names the whole logger. */
  private static final String MARK = "APPLOG";

  @Test
  void theVerdictGoesThroughTheApplicationsLogback() throws Exception {
    Path incidents = Files.createDirectories(Paths.get("target", "runs", "spring-log-incidents"));
    AppJvm jvm =
        new AppJvm("spring-log")
            .defaultLevel()
            .jvmArg(
                "-Dnativemem.watch=on",
                "-Dnativemem.watch.dir=" + incidents.toAbsolutePath(),
                "-Dnativemem.watch.profile=false");
    AppRun attach;
    AppRun app;
    try (RunningApp running =
        jvm.start(
            APP,
            "serve",
            "20",
            "--logging.level.dev.nativemem=info",
            "--logging.pattern.console=" + MARK + " %level %logger %msg%n")) {
      long pid = running.awaitCounter("pid", Duration.ofMinutes(2));
      attach = new AppJvm("spring-log-attach").withoutAgent().cli("attach", "" + pid, "incident");
      app = running.stop();
    }
    assertEquals(0, attach.exitCode(), attach.toString());

    // The bundle the attach reports, which the watch's line in the application's log names.
    Matcher bundle = Pattern.compile("(/\\S*nativemem-incident-[^\\s;]+)").matcher(attach.stdout());
    assertTrue(bundle.find(), attach.toString());
    assertTrue(Files.isDirectory(Paths.get(bundle.group(1))), bundle.group(1));
    List<String> logged =
        app.stdout().lines().filter(l -> l.startsWith(MARK + " ")).collect(Collectors.toList());
    String summary = String.join("\n", logged) + "\nstderr:\n" + app.stderr();
    assertTrue(
        logged.stream()
            .anyMatch(
                l ->
                    l.startsWith(
                            MARK + " WARN dev.nativemem.watch nativemem memory watch: on-demand")
                        && l.contains(bundle.group(1))),
        summary);

    // Every verdict line standard error has, the application's Logback has too, at WARN.
    List<String> verdict =
        app.stderr()
            .lines()
            .filter(l -> l.startsWith("nativemem-incident"))
            .collect(Collectors.toList());
    assertFalse(verdict.isEmpty(), app.stderr());
    for (String line : verdict) {
      assertTrue(
          logged.contains(MARK + " WARN dev.nativemem.incident " + line), line + "\n" + summary);
    }
  }
}
