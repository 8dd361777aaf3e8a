package dev.nativemem.tests.handles.agent;

import org.junit.platform.engine.TestExecutionResult;
import org.junit.platform.engine.discovery.DiscoverySelectors;
import org.junit.platform.testkit.engine.EngineTestKit;
import org.junit.platform.testkit.engine.Event;

/**
 * Runs {@link LeakFixtures.LeaksOptions} through JUnit in a child JVM (whatever agent options it
 * was given) and prints the failure: {@code line} then {@code failure} with newlines as {@code |}.
 */
public final class FixtureRunner {
  private FixtureRunner() {}

  public static void main(String[] args) {
    for (Event event :
        EngineTestKit.engine("junit-jupiter")
            .selectors(DiscoverySelectors.selectClass(LeakFixtures.LeaksOptions.class))
            .execute()
            .allEvents()
            .failed()
            .list()) {
      event
          .getPayload(TestExecutionResult.class)
          .flatMap(TestExecutionResult::getThrowable)
          .ifPresent(e -> System.out.println("failure " + e.getMessage().replace("\n", " | ")));
    }
    System.out.println("line " + LeakFixtures.LeaksOptions.line);
  }
}
