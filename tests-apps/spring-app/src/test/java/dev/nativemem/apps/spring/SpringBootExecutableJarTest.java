package dev.nativemem.apps.spring;

import static org.junit.jupiter.api.Assertions.assertAll;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.nativemem.apps.harness.AgentReport;
import dev.nativemem.apps.harness.AppJvm;
import dev.nativemem.apps.harness.AppRun;
import dev.nativemem.apps.harness.RunningApp;
import dev.nativemem.apps.harness.SourceLine;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * A Spring Boot 4 executable jar ({@code spring-boot-maven-plugin repackage}) reads its own
 * resource through Spring Boot's nested-jar loader: the agent's counts must equal what the
 * application did, at the application's line, not the loader's.
 */
class SpringBootExecutableJarTest {
  private static final int STREAMS = 200;
  private static final Path APP = Paths.get(System.getProperty("app.jar", "missing-app.jar"));
  private static final String INFLATER = "Inflater";
  private static final String SPRING_POOL = "NestedJarFileResources";
  private static final String SPRING_POOL_CLASS =
      "org.springframework.boot.loader.jar." + SPRING_POOL;
  private static String appLine;

  @BeforeAll
  static void findTheApplicationsLine() throws Exception {
    // Not loadable here: failsafe's class path has the repackaged jar (classes in BOOT-INF/).
    appLine =
        SourceLine.frame(
            "dev.nativemem.apps.spring.ResourceStreamsApp", "openAndRead", "first-read");
  }

  private static AppRun run(String variant) throws Exception {
    AppRun run = new AppJvm("spring-" + variant).jar(APP, variant, "" + STREAMS);
    assertEquals(0, run.exitCode(), run.toString());
    assertEquals(STREAMS, run.counter("streams_opened"), run.toString());
    return run;
  }

  private static long openThrough(AgentReport report) {
    return report.sitesThrough(INFLATER, appLine).stream().mapToLong(AgentReport.Site::open).sum();
  }

  private static long leakedThrough(AgentReport report) {
    return report.sitesThrough(INFLATER, appLine).stream()
        .mapToLong(AgentReport.Site::leaked)
        .sum();
  }

  /**
   * Spring Boot's jar streams create their Inflater at the first read (its lazy stream), not in
   * getResourceAsStream: the catalogue still names the unclosed stream, by Spring Boot's frame.
   */
  private static void namedAsUnclosedResourceStreams(AgentReport report) {
    for (AgentReport.Site site : report.sitesThrough(INFLATER, appLine)) {
      assertEquals("unclosed-getResourceAsStream", site.knownId(), site.text());
    }
  }

  @Test
  void streamsKeptUnclosedAreOpenAtTheApplicationsLine() throws Exception {
    AppRun run = run("leak");
    AgentReport report = run.report();
    long opened = run.counter("streams_opened");
    String summary = appLine + "\n" + report.summary();
    assertAll(
        () -> assertEquals(opened, openThrough(report), "open, created through " + summary),
        () -> assertEquals(0, leakedThrough(report), "leaked: " + summary),
        () -> assertEquals(opened, report.openAt(INFLATER, appLine), "headline: " + summary),
        () -> namedAsUnclosedResourceStreams(report));
  }

  @Test
  void streamsClosedLeaveNothingOpenOrLeaked() throws Exception {
    AgentReport report = run("closing").report();
    String summary = appLine + "\n" + report.summary();
    // A closed stream hands its Inflater to the loader's pool: pooled, not open at the reader.
    assertAll(
        () -> assertEquals(0, openThrough(report), "open, created through " + summary),
        () -> assertEquals(0, leakedThrough(report), "leaked: " + summary),
        () -> assertEquals(0, report.count(INFLATER, "leaked"), "leaked Inflaters: " + summary),
        () ->
            assertTrue(
                report.sites().stream()
                    .anyMatch(
                        s ->
                            s.kind().equals(INFLATER)
                                && s.pooled() > 0
                                && s.text().contains(SPRING_POOL)),
                "Inflaters pooled by " + SPRING_POOL + ": " + summary));
  }

  /** A run of the {@code serve} variant: the advice a user's attach got, and the exit report. */
  private static final class Served {
    final AppRun advice;
    final AgentReport report;

    Served(AppRun advice, AgentReport report) {
      this.advice = advice;
      this.report = report;
    }

    long pooledBy(String pool) {
      return report.sites().stream()
          .filter(s -> s.kind().equals(INFLATER) && s.text().contains("(pooled by " + pool + ")"))
          .mapToLong(AgentReport.Site::pooled)
          .sum();
    }
  }

  private static Served serve(AppJvm jvm, String name) throws Exception {
    AppRun advice;
    AppRun stopped;
    try (RunningApp app = jvm.start(APP, "serve", "" + STREAMS)) {
      long pid = app.awaitCounter("pid", Duration.ofMinutes(2));
      advice = new AppJvm(name + "-advice").withoutAgent().cli("attach", "" + pid, "advice");
      stopped = app.stop();
    }
    assertEquals(0, advice.exitCode(), advice.toString());
    return new Served(advice, stopped.report());
  }

  /**
   * At the agent's default level ({@code sampled}) most streams are counted, not recorded: the
   * Inflaters resting in Spring Boot's nested-jar pools are still the loader's, pooled, never open,
   * and a user who asks the running JVM for advice is not told to close them. The truth is the same
   * application at {@code level=full}, where every Inflater's pool events are followed one by one.
   */
  @Test
  void atTheDefaultLevelTheLoadersPooledInflatersAreNotOpen() throws Exception {
    Served full = serve(new AppJvm("spring-serve-full"), "spring-serve-full");
    Served sampled =
        serve(new AppJvm("spring-serve-default-level").defaultLevel(), "spring-serve-default");
    String summary =
        "default level:\n" + sampled.report.summary() + "level=full:\n" + full.report.summary();
    long loaderPooled = full.pooledBy(SPRING_POOL_CLASS);
    // The JDK's own ZipFile pool (the jars on the class path) is not read at the default level
    // yet: what it holds is counted open there unless its creation was sampled (up to 4 stacks a
    // second of each kind are), and nothing else is open.
    long jdkPooled = full.pooledBy("java.util.zip.ZipFile");
    assertAll(
        () -> assertTrue(loaderPooled > 20, "pooled by the loader at level=full: " + summary),
        () -> assertEquals(loaderPooled, sampled.pooledBy(SPRING_POOL_CLASS), summary),
        () -> assertEquals(0, full.report.count(INFLATER, "open"), summary),
        () -> assertTrue(sampled.report.count(INFLATER, "open") <= jdkPooled, summary),
        () -> assertEquals(0, sampled.report.count(INFLATER, "leaked"), summary),
        () ->
            assertFalse(
                sampled.advice.stdout().contains("Inflater open"),
                "advice about open Inflaters:\n" + sampled.advice.stdout()),
        () ->
            assertFalse(
                sampled.advice.stdout().contains("close them"),
                "advice to close what the loader holds:\n" + sampled.advice.stdout()));
  }

  /** The catalogue's Spring Boot frame exists in the loader this executable jar carries. */
  @Test
  void theCatalogueChecksOutAgainstTheExecutableJar() throws Exception {
    AppRun check = new AppJvm("known-leaks-spring").knownLeaks(APP.toString(), "--json");
    assertEquals(0, check.exitCode(), "a catalogue pattern matches nothing:\n" + check);
    assertTrue(
        check
            .stdout()
            .contains(
                "\"frames_present\":[\"java.lang.Class.getResourceAsStream\","
                    + "\"java.lang.ClassLoader.getResourceAsStream\","
                    + "\"java.net.URLClassLoader.getResourceAsStream\","
                    + "\"org.springframework.boot.loader.net.protocol.jar.LazyDelegatingInputStream.in\"]"),
        check.stdout());
  }

  @Test
  void streamsDroppedAndCollectedAreLeakedAtTheApplicationsLine() throws Exception {
    AppRun run = run("dropped");
    long collected = run.counter("streams_collected");
    assertEquals(STREAMS, collected, run.toString());
    AgentReport report = run.report();
    String summary = appLine + "\n" + report.summary();
    // Spring Boot's own Cleaner ends the dropped streams' Inflaters: still a leak of the reader.
    assertAll(
        () -> assertEquals(collected, leakedThrough(report), "leaked through " + summary),
        () -> assertEquals(0, openThrough(report), "open: " + summary),
        () -> assertEquals(collected, report.leakedAt(INFLATER, appLine), "headline: " + summary),
        () -> namedAsUnclosedResourceStreams(report));
  }
}
