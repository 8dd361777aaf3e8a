package dev.nativemem.agent;

import dev.nativemem.internal.NativeBridge;
import java.io.IOException;
import java.io.InputStream;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;

/**
 * Gives the JDK's zip classes, loaded by the bootstrap class loader, a way to {@link HandleHooks}
 * without putting nativemem on the bootstrap class path (which makes the JVM warn and share only
 * the bootstrap loader's classes from a CDS archive): the one class {@code
 * dev.nativemem.boot.ZipHooks} is defined in the bootstrap loader through JNI, and the hooks are
 * installed in it before any JDK class is instrumented. Its class file is in the jar as {@value
 * #RESOURCE} beside this class, a name no class loader looks up, so every loader (Flink's
 * child-first ones, Spring Boot's) resolves the one bootstrap copy.
 */
final class BootHooks {
  static final String NAME = "dev.nativemem.boot.ZipHooks";
  static final String RESOURCE = "ZipHooks.bytes";

  /** The class file is a few KiB; anything larger is not ours. */
  private static final int MAX_BYTES = 64 * 1024;

  private BootHooks() {}

  /** Defines the bridge (once per JVM) and installs the hooks; throws if it cannot. */
  static void install() throws Throwable {
    Class<?> bridge;
    try {
      bridge = Class.forName(NAME, false, null);
    } catch (ClassNotFoundException e) {
      bridge = NativeBridge.agentDefineBootClass(NAME.replace('.', '/'), classFile());
    }
    MethodHandles.Lookup lookup = MethodHandles.lookup();
    Class<?> hooks = HandleHooks.class;
    MethodType object = MethodType.methodType(void.class, Object.class);
    install(
        bridge,
        lookup.findStatic(
            hooks,
            "zipCreated",
            MethodType.methodType(void.class, Object.class, long.class, int.class)),
        lookup.findStatic(
            hooks, "zipFreed", MethodType.methodType(void.class, long.class, int.class)),
        lookup.findStatic(hooks, "zipReleased", object),
        lookup.findStatic(hooks, "zipTaken", object));
    // Links each call once, here, not in the first Inflater's constructor (kind -1 and null
    // are ignored by the tracker).
    bridge.getMethod("zipCreated", Object.class, long.class, int.class).invoke(null, null, 0L, -1);
    bridge.getMethod("zipFreed", long.class, int.class).invoke(null, 0L, -1);
    bridge.getMethod("zipReleased", Object.class).invoke(null, (Object) null);
    bridge.getMethod("zipTaken", Object.class).invoke(null, (Object) null);
  }

  /**
   * Hands {@code bridge} (a copy of {@code ZipHooks}) its hooks: {@code (Object, long, int)},
   * {@code (long, int)}, {@code (Object)} and {@code (Object)}, all void; whether they were taken
   * (only the first install counts).
   */
  static boolean install(
      Class<?> bridge,
      MethodHandle created,
      MethodHandle freed,
      MethodHandle released,
      MethodHandle taken)
      throws ReflectiveOperationException {
    return (Boolean)
        bridge
            .getMethod(
                "install",
                MethodHandle.class,
                MethodHandle.class,
                MethodHandle.class,
                MethodHandle.class)
            .invoke(null, created, freed, released, taken);
  }

  private static byte[] classFile() throws IOException {
    try (InputStream in = BootHooks.class.getResourceAsStream(RESOURCE)) {
      if (in == null) {
        throw new IOException(RESOURCE + " is missing from the nativemem jar");
      }
      byte[] bytes = in.readNBytes(MAX_BYTES + 1);
      if (bytes.length > MAX_BYTES) {
        throw new IOException(RESOURCE + " is larger than " + MAX_BYTES + " bytes");
      }
      return bytes;
    }
  }
}
