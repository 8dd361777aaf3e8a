package dev.nativemem.tests.handles.agent;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.platform.engine.discovery.DiscoverySelectors.selectClass;

import dev.nativemem.base.NativeLeakError;
import dev.nativemem.handles.NativeHandles;
import dev.nativemem.tests.handles.BehaviourScenarios;
import java.io.InputStream;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.platform.testkit.engine.EngineExecutionResults;
import org.junit.platform.testkit.engine.EngineTestKit;
import org.junit.platform.testkit.engine.Event;

/** The JUnit extension against real rocksdbjni, in a JVM that carries the agent. */
class LeakCheckExtensionTest {

  private static EngineExecutionResults run(Class<?> fixture) {
    assertTrue(NativeHandles.agentActive(), "surefire must run this class with -javaagent");
    return EngineTestKit.engine("junit-jupiter").selectors(selectClass(fixture)).execute();
  }

  private static List<Throwable> failures(EngineExecutionResults results) {
    return results.allEvents().failed().stream()
        .map(Event::getPayload)
        .map(
            p -> p.flatMap(o -> ((org.junit.platform.engine.TestExecutionResult) o).getThrowable()))
        .filter(java.util.Optional::isPresent)
        .map(java.util.Optional::get)
        .collect(Collectors.toList());
  }

  @Test
  void leakedOptionsFailTheClassWithExactCountAndCreationLine() {
    List<Throwable> failures = failures(run(LeakFixtures.LeaksOptions.class));
    assertEquals(1, failures.size(), failures.toString());
    Throwable failure = failures.get(0);
    assertTrue(failure instanceof NativeLeakError, failure.toString());
    String message = failure.getMessage();
    String expected =
        LeakFixtures.LEAKED
            + " leaked ColumnFamilyOptions, created at "
            + LeakFixtures.LeaksOptions.class.getName()
            + ".leaks(LeakFixtures.java:"
            + LeakFixtures.LeaksOptions.line
            + ")";
    assertTrue(message.contains(expected), "expected '" + expected + "' in:\n" + message);
    assertTrue(
        message.startsWith(
            "native handles leaked in '"
                + LeakFixtures.LeaksOptions.class.getName()
                + "': "
                + LeakFixtures.LEAKED
                + " leaked"),
        message);
  }

  @Test
  void tryWithResourcesPasses() {
    EngineExecutionResults results = run(LeakFixtures.ClosesOptions.class);
    assertEquals(List.of(), failures(results));
    assertEquals(1, results.testEvents().succeeded().count());
  }

  @Test
  void perMethodFailsOnlyTheLeakyMethod() {
    EngineExecutionResults results = run(LeakFixtures.PerMethod.class);
    assertEquals(1, results.testEvents().succeeded().count());
    assertEquals(1, results.testEvents().failed().count());
    List<Throwable> failures = failures(results);
    assertEquals(1, failures.size(), failures.toString());
    assertTrue(failures.get(0).getMessage().contains("#leaky()"), failures.get(0).getMessage());
    assertTrue(failures.get(0).getMessage().contains("1 leaked ColumnFamilyOptions"));
  }

  @Test
  void knownLeakIsReportedAsKnownNotFailed() {
    assertEquals(List.of(), failures(run(LeakFixtures.KnownLeakAccepted.class)));
  }

  /**
   * A leak of the catalogue fails the test named: its id, what to do; its id given as a known kind
   * accepts it.
   */
  @Test
  void aCataloguedLeakIsNamedInTheFailureAndAcceptedByItsId(@TempDir Path dir) throws Exception {
    LeakFixtures.jar = BehaviourScenarios.jarWithResource(dir);
    try {
      List<Throwable> failures = failures(run(LeakFixtures.UnclosedResourceStream.class));
      assertEquals(1, failures.size(), failures.toString());
      String message = failures.get(0).getMessage();
      assertTrue(
          message.contains(
              "1 open (never closed) Inflater, created at "
                  + LeakFixtures.class.getName()
                  + ".readWithoutClosing(LeakFixtures.java:"),
          message);
      assertTrue(message.contains("[known leak: a stream from getResourceAsStream"), message);
      assertTrue(message.contains("(unclosed-getResourceAsStream; fixed in: your code)"), message);
      assertTrue(message.contains("do now: close the stream where it is read"), message);
      assertEquals(List.of(), failures(run(LeakFixtures.UnclosedResourceStreamAccepted.class)));
    } finally {
      for (InputStream in : LeakFixtures.UNCLOSED) {
        in.close();
      }
    }
  }

  /** The one failure of {@code fixture}, which reads a jar's resource without closing it. */
  private static String onlyFailure(Class<?> fixture, Path dir) throws Exception {
    LeakFixtures.jar = BehaviourScenarios.jarWithResource(dir);
    try {
      List<Throwable> failures = failures(run(fixture));
      assertEquals(1, failures.size(), failures.toString());
      return failures.get(0).getMessage();
    } finally {
      for (InputStream in : LeakFixtures.UNCLOSED) {
        in.close();
      }
    }
  }

  /** A catalogue id goes in id, a kind in kind: an id in kind is refused with what to write. */
  @Test
  void aCatalogueIdGivenAsKindIsRefusedNamingIdInstead(@TempDir Path dir) throws Exception {
    String message = onlyFailure(LeakFixtures.CatalogueIdAsKind.class, dir);
    assertTrue(message.contains("write @Known(id = \"unclosed-getResourceAsStream\")"), message);
  }

  /** The reason given for an accepted leak is in the failure's list of known leaks. */
  @Test
  void theReasonOfAnAcceptedLeakIsShownInTheFailure(@TempDir Path dir) throws Exception {
    String message = onlyFailure(LeakFixtures.AcceptedReasonShown.class, dir);
    assertTrue(message.contains("1 leaked ColumnFamilyOptions"), message);
    assertTrue(message.contains("known leaks, not failed:"), message);
    String accepted = message.substring(message.indexOf("known leaks, not failed:"));
    assertTrue(
        accepted.contains("open (never closed) Inflater: a stream from getResourceAsStream"),
        accepted);
    assertTrue(accepted.contains(": the test closes the stream itself\n"), accepted);
  }
}
