package dev.nativemem.handles.catalogue;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

class LeakCatalogueTest {
  /** JUnit's jar as a stand-in library: its version is in its file name, an independent truth. */
  private static final Class<?> LIBRARY = org.junit.jupiter.api.Assertions.class;

  private static final String LIBRARY_FRAME =
      "\tat org.junit.jupiter.api.Assertions.fail(Assertions.java:1)\n";

  private static String jarVersion() {
    String jar = LIBRARY.getProtectionDomain().getCodeSource().getLocation().getPath();
    Matcher m = Pattern.compile("junit-jupiter-api-([0-9][^/]*)\\.jar$").matcher(jar);
    assertTrue(m.find(), "JUnit's jar is named with its version: " + jar);
    return m.group(1);
  }

  private static LeakCatalogue catalogue(String affected) {
    return LeakCatalogue.parse(
        "{\"entries\": [{\"id\": \"JUNIT-1\", \"link\": \"l\", \"summary\": \"s\","
            + " \"kind\": \"Inflater\", \"frames\": [\"org.junit.jupiter.api.Assertions.fail\"],"
            + " \"library\": \"JUnit\", \"artifact\": \"org.junit.jupiter:junit-jupiter-api\","
            + " \"affected\": ["
            + affected
            + "], \"fixed_in\": \"f\", \"cost\": \"c\", \"workaround\": \"w\"}]}");
  }

  @Test
  void theShippedCatalogueParsesAndNamesTheIssuesEntries() {
    LeakCatalogue catalogue = LeakCatalogue.get();
    for (String id :
        new String[] {"FLINK-39753", "FLINK-39923", "KAFKA-14432", "facebook/rocksdb#15036"}) {
      assertNotNull(catalogue.entry(id), id);
    }
    assertTrue(catalogue.entry("facebook/rocksdb#15036").accepted());
    assertFalse(catalogue.entry("FLINK-39753").accepted());
  }

  /** The shipped entries' frames that are in the JDK exist (the others: tests-apps, real jars). */
  /** Stacks are checked against this list without reading the catalogue: it must be complete. */
  @Test
  void versionedClassesAreExactlyTheCataloguesVersionedFrames() {
    assertEquals(LeakCatalogue.VERSIONED_CLASSES, LeakCatalogue.get().versionedClasses());
  }

  @Test
  void selfCheckFindsTheShippedJdkFramesAndReportsAPatternThatMatchesNothing() {
    LeakCatalogue shipped = LeakCatalogue.get();
    ClassLoader loader = getClass().getClassLoader();
    List<CatalogueCheck> checks = shipped.inspect(loader);
    assertTrue(
        checks.stream()
            .anyMatch(c -> c.framesPresent().contains("java.lang.Class.getResourceAsStream")),
        checks.toString());
    assertEquals(List.of(), problems(checks));
    LeakCatalogue planted =
        LeakCatalogue.parse(
            "{\"entries\": [{\"id\": \"X-1\", \"link\": \"l\", \"summary\": \"s\","
                + " \"kind\": \"Inflater\", \"frames\": [\"java.lang.Class.getResourceAsStreem\"],"
                + " \"library\": \"JDK\", \"fixed_in\": \"f\", \"cost\": \"c\","
                + " \"workaround\": \"w\"}]}");
    List<String> problems = problems(planted.inspect(loader));
    assertEquals(1, problems.size(), problems.toString());
    assertTrue(
        problems.get(0).contains("X-1: java.lang.Class.getResourceAsStreem matches nothing"));
  }

  private static List<String> problems(List<CatalogueCheck> checks) {
    return checks.stream().flatMap(c -> c.problems().stream()).collect(Collectors.toList());
  }

  @Test
  void anEntryFiresOnAnAffectedVersionAndSaysWhichOneYouRun() {
    String version = jarVersion();
    LeakCatalogue catalogue = catalogue("{\"through\": \"" + version + "\"}");
    catalogue.note(LIBRARY);
    LeakCatalogue.Match match = catalogue.match("Inflater", LIBRARY_FRAME);
    assertNotNull(match);
    assertEquals(List.of(version), List.copyOf(match.versions()));
    assertTrue(match.label().contains("you run JUnit " + version), match.label());
    assertNull(catalogue.match("Deflater", LIBRARY_FRAME), "another kind");
    assertNull(catalogue.match("Inflater", "\tat org.junit.jupiter.api.Assertions.failX(A:1)\n"));
  }

  @Test
  void anEntryIsSilentOnAFixedVersion() {
    LeakCatalogue catalogue = catalogue("{\"before\": \"" + jarVersion() + "\"}");
    catalogue.note(LIBRARY);
    assertNull(catalogue.match("Inflater", LIBRARY_FRAME));
  }

  @Test
  void aVersionNeverReadIsSaidToBeUnknown() {
    LeakCatalogue catalogue = catalogue("{\"before\": \"1.0\"}");
    LeakCatalogue.Match match = catalogue.match("Inflater", LIBRARY_FRAME);
    assertNotNull(match);
    assertTrue(match.label().contains("the JUnit jar states no version"), match.label());
  }

  @Test
  void framesAreMatchedWithoutModuleOrLoaderPrefix() {
    assertEquals(
        List.of("java.lang.Class.getResourceAsStream", "com.example.App.main"),
        List.copyOf(
            LeakCatalogue.frames(
                "created at com.example.App.main(App.java:3)\n"
                    + "\tat java.base/java.lang.Class.getResourceAsStream(Class.java:2850)\n"
                    + "\tat app//com.example.App.main(App.java:3)\n")));
  }

  @Test
  void versionsCompareByTheirNumbers() {
    assertTrue(LibraryVersions.compare("1.20.4", "1.20.5") < 0);
    assertTrue(LibraryVersions.compare("1.20.10", "1.20.5") > 0);
    assertTrue(LibraryVersions.compare("2.3", "2.3.0") == 0);
    assertTrue(LibraryVersions.compare("2.3.0-SNAPSHOT", "2.3.0") == 0);
    assertTrue(LibraryVersions.compare("8.10.0-ververica-1.0", "7") > 0);
  }

  @Test
  void aBrokenEntryIsRefusedWithItsIdAndField() {
    IllegalArgumentException e =
        assertThrows(
            IllegalArgumentException.class,
            () -> LeakCatalogue.parse("{\"entries\": [{\"id\": \"A-1\", \"kind\": \"x\"}]}"));
    assertTrue(e.getMessage().contains("A-1 lacks 'link'"), e.getMessage());
  }
}
