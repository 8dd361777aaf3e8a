package dev.nativemem.tests.handles.agent;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.platform.engine.discovery.DiscoverySelectors.selectClass;

import dev.nativemem.HandleLeakError;
import dev.nativemem.NativeHandles;
import java.util.List;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
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
    assertTrue(failure instanceof HandleLeakError, failure.toString());
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
}
