package dev.nativemem.internal;

/**
 * Which optional JDK modules this runtime has (a {@code jlink}ed image may have {@code java.base}
 * alone): a class that touches no optional module itself, so that callers can ask before loading
 * one that does.
 */
public final class RuntimeModules {
  /** Why JMX is absent (no {@code java.management}), or null: the boot layer never changes. */
  public static final String JMX_ABSENCE = absence("java.management", "JMX");

  private RuntimeModules() {}

  /** Why {@code module} is absent from this runtime, naming what it provides; null if present. */
  public static String absence(String module, String provides) {
    return ModuleLayer.boot().findModule(module).isPresent()
        ? null
        : "this runtime has no "
            + module
            + " module, so no "
            + provides
            + " (add "
            + module
            + " to the jlink --add-modules list)";
  }
}
