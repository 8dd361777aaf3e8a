package dev.nativemem.handles.catalogue;

import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * One catalogue entry checked against a class path (the {@code known-leaks} command, the
 * catalogue's self-check): its frames whose classes are there, the versions those come from,
 * whether they are affected, and patterns that match nothing in an affected release.
 */
public final class CatalogueCheck {
  private final LeakCatalogue.Entry entry;
  private final List<String> framesPresent = new ArrayList<>();
  private final List<String> problems = new ArrayList<>();
  private final Set<String> versions = new LinkedHashSet<>();
  private boolean affected;

  private CatalogueCheck(LeakCatalogue.Entry entry) {
    this.entry = entry;
  }

  public LeakCatalogue.Entry entry() {
    return entry;
  }

  /** Whether the library is there and a version it affects (or one that states none) loads. */
  public boolean affected() {
    return affected;
  }

  /** The frames whose class the class path has. */
  public List<String> framesPresent() {
    return framesPresent;
  }

  /** Patterns that match nothing in an affected release there, one line each. */
  public List<String> problems() {
    return problems;
  }

  /** One line for people. */
  @Override
  public String toString() {
    String state;
    if (framesPresent.isEmpty()) {
      state = "not on this class path";
    } else if (!entry.versioned()) {
      state = entry.library() + ": recognised in every version (fixed in: " + entry.fixedIn() + ")";
    } else {
      state =
          (versions.isEmpty()
                  ? entry.library()
                  : entry.library() + " " + String.join(", ", versions))
              + (affected ? ": AFFECTED" : ": not affected")
              + " (fixed in: "
              + entry.fixedIn()
              + ")";
    }
    return entry.id()
        + " ("
        + entry.kind()
        + " at "
        + String.join(" or ", entry.frames())
        + "): "
        + state;
  }

  public Map<String, Object> toMap() {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("id", entry.id());
    m.put("kind", entry.kind());
    m.put("library", entry.library());
    m.put("frames_present", framesPresent);
    m.put("versions", new ArrayList<>(versions));
    m.put("affected", affected);
    m.put("fixed_in", entry.fixedIn());
    m.put("problems", problems);
    return m;
  }

  /**
   * Each entry against the classes {@code loader} loads: its frames present, patterns that match
   * nothing, the library versions those classes come from and whether they are affected.
   */
  static List<CatalogueCheck> of(List<LeakCatalogue.Entry> entries, ClassLoader loader) {
    List<CatalogueCheck> all = new ArrayList<>();
    for (LeakCatalogue.Entry entry : entries) {
      CatalogueCheck check = new CatalogueCheck(entry);
      for (String frame : entry.frames()) {
        Class<?> type;
        try {
          type = Class.forName(LeakCatalogue.classOf(frame), false, loader);
        } catch (ClassNotFoundException | LinkageError e) {
          continue; // that library is not on this class path
        }
        check.framesPresent.add(frame);
        boolean affected = true;
        if (entry.versioned()) {
          String version = LibraryVersions.of(type, entry.artifact(), entry.versionResource());
          check.versions.add(version == null ? "unknown" : version);
          affected = version == null || entry.affects(version);
        }
        check.affected |= affected;
        // A fixed release may well have dropped the method: only an affected one must have it.
        String method = frame.substring(frame.lastIndexOf('.') + 1);
        try {
          if (affected && !declares(type, method)) {
            check.problems.add(
                entry.id()
                    + ": "
                    + frame
                    + " matches nothing: "
                    + type.getName()
                    + " has no such method");
          }
        } catch (LinkageError e) {
          check.problems.add(entry.id() + ": cannot inspect " + type.getName() + ": " + e);
        }
      }
      all.add(check);
    }
    return all;
  }

  private static boolean declares(Class<?> type, String method) {
    if (method.equals("<init>")) {
      return type.getDeclaredConstructors().length > 0;
    }
    for (Method m : type.getDeclaredMethods()) {
      if (m.getName().equals(method)) {
        return true;
      }
    }
    return false;
  }
}
