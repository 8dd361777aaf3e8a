package dev.nativemem.apps.kafka;

import static org.junit.platform.engine.discovery.DiscoverySelectors.selectClass;

import org.junit.platform.engine.TestExecutionResult;
import org.junit.platform.testkit.engine.EngineExecutionResults;
import org.junit.platform.testkit.engine.EngineTestKit;

/**
 * Runs one JUnit class in this JVM (started with the agent) and prints {@code FAILED <message>} for
 * each failure and {@code SUCCEEDED <tests>}.
 */
public final class LeakCheckRunner {
  private LeakCheckRunner() {}

  public static void main(String[] args) throws Exception {
    EngineExecutionResults results =
        EngineTestKit.engine("junit-jupiter")
            .selectors(selectClass(Class.forName(args[0])))
            .execute();
    results.allEvents().failed().stream()
        .map(
            e -> e.getPayload(TestExecutionResult.class).flatMap(TestExecutionResult::getThrowable))
        .forEach(t -> System.out.println("FAILED " + t.map(Throwable::getMessage).orElse("")));
    System.out.println("SUCCEEDED " + results.testEvents().succeeded().count());
  }
}
