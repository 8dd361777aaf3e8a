package dev.nativemem.junit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.platform.engine.discovery.DiscoverySelectors.selectClass;

import dev.nativemem.handles.NativeHandles;
import java.util.List;
import java.util.Optional;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.platform.engine.TestExecutionResult;
import org.junit.platform.testkit.engine.EngineTestKit;
import org.junit.platform.testkit.engine.Event;

/** This module's tests run without the agent: the extension must say so, and how to add it. */
class NativeLeakCheckWithoutAgentTest {

  @ExtendWith(NativeLeakCheck.class)
  static class AnyTest {
    @Test
    void nothing() {}
  }

  @ExtendWith(NativeLeakCheck.class)
  static class LeaksTrackedResource {
    @Test
    void leaks() {
      NativeHandles.track(() -> {}, "AppBuffer");
    }
  }

  private static List<String> failures(Class<?> fixture) {
    return EngineTestKit.engine("junit-jupiter")
        .selectors(selectClass(fixture))
        .execute()
        .allEvents()
        .failed()
        .stream()
        .map(Event::getPayload)
        .map(p -> p.flatMap(o -> ((TestExecutionResult) o).getThrowable()))
        .filter(Optional::isPresent)
        .map(t -> t.get().getMessage())
        .collect(Collectors.toList());
  }

  @AfterEach
  void clearProperty() {
    System.clearProperty(NativeLeakCheck.REQUIRE_AGENT_PROPERTY);
  }

  @Test
  void withoutTheAgentTheClassFailsWithTheSurefireArgLine() {
    List<String> failures = failures(AnyTest.class);
    assertEquals(1, failures.size(), failures.toString());
    String message = failures.get(0);
    assertTrue(message.contains("the nativemem agent is not attached"), message);
    assertTrue(
        message.contains(
            "<argLine>-javaagent:${settings.localRepository}/dev/nativemem/nativemem/"),
        message);
    assertTrue(message.contains("-Dnativemem.junit.requireAgent=false"), message);
  }

  @Test
  void withTheAgentOptionalTrackedResourcesAreStillChecked() {
    System.setProperty(NativeLeakCheck.REQUIRE_AGENT_PROPERTY, "false");
    assertEquals(List.of(), failures(AnyTest.class));
    List<String> failures = failures(LeaksTrackedResource.class);
    assertEquals(1, failures.size(), failures.toString());
    assertTrue(failures.get(0).contains("1 leaked AppBuffer"), failures.get(0));
  }
}
