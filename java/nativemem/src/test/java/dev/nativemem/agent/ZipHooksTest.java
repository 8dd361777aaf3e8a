package dev.nativemem.agent;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.InputStream;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.lang.reflect.Method;
import org.junit.jupiter.api.Test;

/**
 * The bridge the JDK's zip classes call ({@code dev.nativemem.boot.ZipHooks}, from the bytes the
 * jar keeps for {@link BootHooks}): what a hook throws, an Error included, stays in the bridge and
 * is counted. The instrumented {@code Inflater} constructor runs inside every class loader's read
 * of a jar entry, where an escaping exception turns into a {@code ClassNotFoundException} of the
 * application's class.
 */
class ZipHooksTest {
  private static final long[] SEEN = new long[2];

  @Test
  void whatAHookThrowsNeverReachesTheCaller() throws Throwable {
    Class<?> bridge = freshBridge();
    MethodHandles.Lookup lookup = MethodHandles.lookup();
    MethodType object = MethodType.methodType(void.class, Object.class);
    assertTrue(
        BootHooks.install(
            bridge,
            lookup.findStatic(
                ZipHooksTest.class,
                "created",
                MethodType.methodType(void.class, Object.class, long.class, int.class)),
            lookup.findStatic(
                ZipHooksTest.class,
                "freed",
                MethodType.methodType(void.class, long.class, int.class)),
            lookup.findStatic(ZipHooksTest.class, "overflows", object),
            lookup.findStatic(ZipHooksTest.class, "overflows", object)));

    // Each call returns normally (on the old bridge, InvocationTargetException).
    bridge.getMethod("zipCreated", Object.class, long.class, int.class).invoke(null, null, 7L, 0);
    bridge.getMethod("zipFreed", long.class, int.class).invoke(null, 7L, 1);
    bridge.getMethod("zipReleased", Object.class).invoke(null, new Object());
    bridge.getMethod("zipTaken", Object.class).invoke(null, new Object());

    assertArrayEquals(new long[] {7, 7}, SEEN, "the hooks ran with the JDK's arguments");
    Method failures = bridge.getMethod("failures");
    assertEquals(4L, failures.invoke(null), "each thrown hook call is counted");
  }

  /** A copy of the bridge in a loader of its own: the boot loader's copy is the agent's. */
  private static Class<?> freshBridge() throws Exception {
    byte[] bytes;
    try (InputStream in = BootHooks.class.getResourceAsStream(BootHooks.RESOURCE)) {
      assertNotNull(in, BootHooks.RESOURCE + " beside BootHooks (the build renames the class)");
      bytes = in.readAllBytes();
    }
    return new ClassLoader(null) {
      Class<?> define() {
        return defineClass(BootHooks.NAME, bytes, 0, bytes.length);
      }
    }.define();
  }

  @SuppressWarnings("unused")
  private static void created(Object owner, long address, int kind) {
    SEEN[0] = address;
    throw new IllegalStateException("a hook that fails");
  }

  @SuppressWarnings("unused")
  private static void freed(long address, int kind) {
    SEEN[1] = address;
    throw new NullPointerException("a hook that fails");
  }

  @SuppressWarnings("unused")
  private static void overflows(Object inflater) {
    throw new StackOverflowError("a hook on a stack too deep");
  }
}
