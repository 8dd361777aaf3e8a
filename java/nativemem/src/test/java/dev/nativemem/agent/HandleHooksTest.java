package dev.nativemem.agent;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;

import org.junit.jupiter.api.Test;

/**
 * The classes the hooks load at the agent's start, before the first hooked {@code Inflater}, are
 * named by string (some are not visible from the agent's package): each name must still be a class
 * of the jar, or the agent stays off at every start.
 */
class HandleHooksTest {
  @Test
  void everyClassOfTheRecordPathIsInTheJar() throws ClassNotFoundException {
    assertFalse(HandleHooks.RECORD_PATH.isEmpty());
    for (String name : HandleHooks.RECORD_PATH) {
      assertNotNull(Class.forName(name, false, HandleHooks.class.getClassLoader()), name);
    }
  }
}
