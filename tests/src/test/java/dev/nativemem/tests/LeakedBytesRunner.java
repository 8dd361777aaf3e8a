package dev.nativemem.tests;

import dev.nativemem.NativeMemory;
import dev.nativemem.profile.ProfileRequest;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;
import org.junit.platform.engine.TestExecutionResult;
import org.junit.platform.engine.discovery.DiscoverySelectors;
import org.junit.platform.testkit.engine.EngineExecutionResults;
import org.junit.platform.testkit.engine.EngineTestKit;
import org.junit.platform.testkit.engine.Event;

/**
 * Runs the {@link LeakedBytesFixtures} (or the one named) through JUnit in a child JVM (the agent
 * and a profiling allocator given by the parent) and prints, per class, {@code RESULT <class>
 * <failure or passed>} (newlines as {@code |}), then the planted truth and what the JVM allocated
 * under the churning class's frames.
 */
public final class LeakedBytesRunner {
  private LeakedBytesRunner() {}

  public static void main(String[] args) throws Exception {
    Class<?>[] fixtures = {
      LeakedBytesFixtures.LeaksDeflaters.class,
      LeakedBytesFixtures.JvmChurn.class,
      LeakedBytesFixtures.EndsDeflaters.class,
      LeakedBytesFixtures.PerMethod.class
    };
    if (args.length > 0) {
      fixtures =
          new Class<?>[] {Class.forName(LeakedBytesFixtures.class.getName() + "$" + args[0])};
    }
    for (Class<?> fixture : fixtures) {
      EngineExecutionResults results =
          EngineTestKit.engine("junit-jupiter")
              .selectors(DiscoverySelectors.selectClass(fixture))
              .execute();
      String outcome = "passed";
      for (Event event : results.allEvents().failed().list()) {
        Optional<Throwable> failure =
            event.getPayload(TestExecutionResult.class).flatMap(TestExecutionResult::getThrowable);
        if (failure.isPresent()) {
          outcome =
              failure.get().getClass().getSimpleName()
                  + ": "
                  + failure.get().getMessage().replace("\n", " | ");
        }
      }
      System.out.println("RESULT " + fixture.getSimpleName() + " " + outcome);
      System.out.println(
          "FAILED_TESTS " + fixture.getSimpleName() + " " + results.testEvents().failed().count());
    }
    if (args.length > 0) {
      return;
    }
    System.out.println("LINE " + LeakedBytesFixtures.LeaksDeflaters.line);
    System.out.println("TRUTH " + LeakedBytesFixtures.LeaksDeflaters.truthBytes);
    if (!NativeMemory.profiling().isAvailable()) {
      return;
    }
    // Every live sample under the churning class's frames, whoever allocated it.
    Path dir = Files.createTempDirectory("leaked-bytes");
    Path dump = NativeMemory.dumpProfile(dir.resolve("after.heap")).path();
    ProfileRequest.Format collapsed = ProfileRequest.Format.COLLAPSED;
    long underChurn =
        ProfileRequest.of(dump)
            .render(collapsed)
            .run()
            .rendered(collapsed)
            .lines()
            .filter(l -> l.contains(LeakedBytesFixtures.JvmChurn.class.getName() + "."))
            .mapToLong(l -> Long.parseLong(l.substring(l.lastIndexOf(' ') + 1)))
            .sum();
    System.out.println("UNDER_CHURN " + underChurn);
  }
}
