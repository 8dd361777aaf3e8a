package dev.nativemem.handles;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.nativemem.base.Advice;
import dev.nativemem.handles.advice.HandleAdvice;
import dev.nativemem.handles.catalogue.LibraryOwners;
import dev.nativemem.internal.Json;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.jar.JarEntry;
import java.util.jar.JarOutputStream;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A known leak of the caller ("your code") whose site's first application frame is inside a
 * library's jar is that library's: the report, its JSON and the advice name the library as its jar
 * names itself (pom.properties), and tell what its user can do, not to fix "your code".
 */
class LibraryKnownLeakTest {
  private static final String CLASS = LibraryReader.class.getName();
  private static final String FRAME = CLASS + ".read(LibraryReader.java:7)";
  private static final String LIBRARY = "org.example:widgets 1.2.3";

  @TempDir Path tmp;

  /** A jar holding {@link LibraryReader} and the pom.properties of org.example:widgets 1.2.3. */
  private Class<?> libraryClass() throws Exception {
    Path jar = tmp.resolve("widgets-1.2.3.jar");
    String entry = CLASS.replace('.', '/') + ".class";
    try (OutputStream file = Files.newOutputStream(jar);
        JarOutputStream out = new JarOutputStream(file);
        InputStream bytes = LibraryReader.class.getResourceAsStream("/" + entry)) {
      out.putNextEntry(new JarEntry("META-INF/maven/org.example/widgets/pom.properties"));
      out.write(
          "groupId=org.example\nartifactId=widgets\nversion=1.2.3\n"
              .getBytes(StandardCharsets.UTF_8));
      out.putNextEntry(new JarEntry(entry));
      out.write(bytes.readAllBytes());
    }
    URLClassLoader loader = new URLClassLoader(new URL[] {jar.toUri().toURL()}, null);
    Class<?> type = Class.forName(CLASS, false, loader);
    assertNotSame(LibraryReader.class, type, "loaded from the library's jar");
    return type;
  }

  private static HandleReport report() {
    String stack =
        "created at app//"
            + FRAME
            + "\n\tat java.base/java.util.zip.Inflater.<init>(Inflater.java:120)\n"
            + "\tat java.base/java.lang.Class.getResourceAsStream(Class.java:2800)\n"
            + "\tat app//"
            + FRAME
            + "\n";
    String json =
        "{\"kinds\": [{\"kind\": \"Inflater\", \"created\": 3, \"closed\": 0, \"transferred\": 0,"
            + " \"open\": 0, \"pooled\": 0, \"leaked\": 3}], \"sites\": [{\"kind\": \"Inflater\","
            + " \"open\": 0, \"pooled\": 0, \"leaked\": 3,"
            + " \"freed_by_finalizer\": 0, \"last_freed_by_finalizer_epoch_ms\": null, \"stack\": "
            + Json.write(stack)
            + "}], \"zombie_caches\": [], \"oldest_open\": [], \"open_cache_capacity_bytes\": 0,"
            + " \"zombie_cache_capacity_bytes\": 0, \"sites_dropped\": 0, \"sites_kept\": 1,"
            + " \"tracker_memory_bytes\": 0}";
    return HandleReports.fromJson(true, json);
  }

  @Test
  void aCallersLeakInsideALibraryIsThatLibrarys() throws Exception {
    LibraryOwners.note(libraryClass());
    assertEquals(LIBRARY, LibraryOwners.ofFrame("app//" + FRAME));
    HandleReport report = report();
    HandleReport.Site site = report.sites().get(0);
    assertEquals("unclosed-getResourceAsStream", site.knownLeakId());
    assertTrue(site.knownLeak().contains("; in " + LIBRARY + ";"), site.knownLeak());
    assertFalse(site.knownLeak().contains("your code"), site.knownLeak());
    assertTrue(report.toString().contains("[known upstream leak: "), report.toString());
    Map<String, Object> known =
        Json.object(Json.objects(Json.parseObject(report.toJson()), "sites").get(0), "known");
    assertEquals(LIBRARY, known.get("library"));
    assertEquals("a release of org.example:widgets that closes it", known.get("fixed_in"));
    List<String> leaked =
        HandleAdvice.evaluate(report).stream()
            .filter(a -> a.code().equals("HANDLES_LEAKED"))
            .map(Advice::message)
            .collect(Collectors.toList());
    assertEquals(1, leaked.size(), leaked.toString());
    assertFalse(leaked.get(0).contains("fixed in: your code"), leaked.get(0));
    assertFalse(leaked.get(0).contains("close the stream where it is read"), leaked.get(0));
    assertTrue(
        leaked.get(0).contains("upgrade it, or report it to its maintainers"), leaked.get(0));
  }

  /** A class of the application itself (a build's classes directory) is nobody else's. */
  @Test
  void theApplicationsOwnClassesNameNoLibrary() {
    LibraryOwners.note(UnknownSiteAdviceTest.class);
    assertEquals(
        null,
        LibraryOwners.ofFrame(
            UnknownSiteAdviceTest.class.getName() + ".x(UnknownSiteAdviceTest.java:1)"));
  }
}
