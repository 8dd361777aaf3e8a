package dev.nativemem.boot;

import java.lang.invoke.MethodHandle;

/**
 * The one class of nativemem in the bootstrap class loader: the instrumented {@code java.util.zip}
 * classes (loaded by the bootstrap loader, which sees no other nativemem class) call these methods,
 * which forward to the agent's hooks ({@code dev.nativemem.agent.HandleHooks}, in the system class
 * loader). The agent defines this class from its bytes through JNI and installs the hooks once,
 * before it instruments any JDK class; its class file is not in the jar under a class's name (the
 * build renames it), so no class loader finds a copy of its own.
 */
public final class ZipHooks {
  private static volatile MethodHandle created;
  private static volatile MethodHandle freed;
  private static volatile MethodHandle released;
  private static volatile MethodHandle taken;

  private ZipHooks() {}

  /**
   * Installs the hooks; only the first call counts (the agent makes it before instrumenting), so
   * nothing can replace them later. Returns whether this call installed them.
   */
  public static synchronized boolean install(
      MethodHandle created, MethodHandle freed, MethodHandle released, MethodHandle taken) {
    if (ZipHooks.created != null) {
      return false;
    }
    ZipHooks.freed = freed;
    ZipHooks.released = released;
    ZipHooks.taken = taken;
    ZipHooks.created = created;
    return true;
  }

  /** An Inflater (kind 0) or Deflater (1) owning the zlib stream at {@code address}. */
  public static void zipCreated(Object owner, long address, int kind) throws Throwable {
    MethodHandle hook = created;
    if (hook != null) {
      hook.invokeExact(owner, address, kind);
    }
  }

  /** The stream at {@code address} is freed. */
  public static void zipFreed(long address, int kind) throws Throwable {
    MethodHandle hook = freed;
    if (hook != null) {
      hook.invokeExact(address, kind);
    }
  }

  /** An Inflater goes back into {@code ZipFile}'s pool. */
  public static void zipReleased(Object inflater) throws Throwable {
    MethodHandle hook = released;
    if (hook != null) {
      hook.invokeExact(inflater);
    }
  }

  /** An Inflater is taken out of {@code ZipFile}'s pool. */
  public static void zipTaken(Object inflater) throws Throwable {
    MethodHandle hook = taken;
    if (hook != null) {
      hook.invokeExact(inflater);
    }
  }
}
