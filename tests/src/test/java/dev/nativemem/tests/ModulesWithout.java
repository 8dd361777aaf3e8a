package dev.nativemem.tests;

import java.lang.module.ModuleDescriptor;
import java.lang.module.ModuleFinder;
import java.lang.module.ModuleReference;
import java.util.Set;
import java.util.TreeSet;

/**
 * Run by a JDK's own {@code java}: prints its system modules, comma-separated, but {@code args[0]}
 * and every module that needs it (directly or through another), for {@code jlink --add-modules}.
 */
public final class ModulesWithout {
  private ModulesWithout() {}

  public static void main(String[] args) {
    Set<String> removed = new TreeSet<>(Set.of(args[0]));
    Set<ModuleDescriptor> all = new java.util.HashSet<>();
    for (ModuleReference module : ModuleFinder.ofSystem().findAll()) {
      all.add(module.descriptor());
    }
    for (boolean more = true; more; ) {
      more = false;
      for (ModuleDescriptor module : all) {
        if (!removed.contains(module.name())
            && module.requires().stream().anyMatch(r -> removed.contains(r.name()))) {
          removed.add(module.name());
          more = true;
        }
      }
    }
    Set<String> kept = new TreeSet<>();
    all.forEach(m -> kept.add(m.name()));
    kept.removeAll(removed);
    System.out.print(String.join(",", kept));
  }
}
