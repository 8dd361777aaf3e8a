package dev.nativemem.handles;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.nativemem.base.NativeLeakError;
import dev.nativemem.base.Setting;
import dev.nativemem.base.TrackingLevel;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** The API in a JVM without the agent: only resources registered with track() are counted. */
class NativeHandlesWithoutAgentTest {
  private static final AtomicInteger CLOSED = new AtomicInteger();

  /** Stands for a resource an application owns, such as a JNI wrapper of its own. */
  static final class NativeBuffer implements AutoCloseable {
    @Override
    public void close() {
      CLOSED.incrementAndGet();
    }
  }

  /** Without the agent or the property, the level is the settings table's default. */
  @Test
  void trackingLevelIsTheSettingsDefaultWithoutTheAgent() {
    assertFalse(NativeHandles.agentActive());
    assertEquals(
        TrackingLevel.of(Setting.HANDLES_LEVEL.defaultValue()), NativeHandles.trackingLevel());
    assertEquals(TrackingLevel.FULL, TrackingLevel.of(" Full "));
    IllegalArgumentException e =
        assertThrows(IllegalArgumentException.class, () -> TrackingLevel.of("stacks"));
    assertTrue(e.getMessage().contains("off, counts, sampled, full"), e.getMessage());
  }

  @Test
  void trackedResourcesAreCountedAndTheirLeaksFound() throws Exception {
    assertFalse(NativeHandles.agentActive());
    try (HandleScope scope = NativeHandles.scope("app")) {
      int closedBefore = CLOSED.get();
      try (TrackedResource<NativeBuffer> kept = NativeHandles.track(new NativeBuffer())) {
        assertTrue(kept.get() instanceof NativeBuffer);
      }
      assertEquals(closedBefore + 1, CLOSED.get());
      for (int i = 0; i < 3; i++) {
        NativeHandles.track(new NativeBuffer(), "LeakyBuffer");
      }
      String failure = scope.check();
      assertTrue(failure != null && failure.contains("3 leaked LeakyBuffer"), failure);
      // A kind created a few times a second has every stack recorded at level=sampled.
      assertTrue(failure.contains("3 leaked LeakyBuffer, created at "), failure);
      assertFalse(failure.contains("not sampled"), failure);
      assertTrue(failure.contains("the nativemem agent is not attached"), failure);
      assertTrue(failure.contains("/nativemem-0.1.0.jar=level=full</argLine>"), failure);
      assertEquals(4, scope.created());
      assertEquals(1, scope.closed());
      assertEquals(3, scope.leaked());
      assertThrows(
          NativeLeakError.class,
          () -> scope.assertNoLeaks(KnownLeak.ofKind("NativeBuffer", "never matches")));
      scope.assertNoLeaks(KnownLeak.ofKind("LeakyBuffer", "planted by this test"));
    }
    HandleReport report = NativeHandles.report();
    assertFalse(report.agentActive());
    assertEquals(3, report.kind("LeakyBuffer").leaked());
    assertEquals(1, report.kind("NativeBuffer").closed());
    assertTrue(report.toJson().contains("\"kind\":\"LeakyBuffer\""), report.toJson());
    assertTrue(report.toString().contains("agent not attached"), report.toString());
  }

  @Test
  void threadsStartedInAScopeCountInIt() throws Exception {
    try (HandleScope scope = NativeHandles.scope("threads")) {
      Thread worker = new Thread(() -> NativeHandles.track(new NativeBuffer(), "FromThread"));
      worker.start();
      worker.join();
      assertEquals(1, scope.created());
    }
    try (HandleScope other = NativeHandles.scope("after")) {
      assertNull(other.check());
    }
  }

  @Test
  void knownLeakNeedsAReason() {
    assertThrows(IllegalArgumentException.class, () -> KnownLeak.ofKind("X", " "));
  }
}
