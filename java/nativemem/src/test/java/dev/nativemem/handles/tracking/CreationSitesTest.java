package dev.nativemem.handles.tracking;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.URL;
import java.net.URLClassLoader;
import java.util.Collections;
import java.util.List;
import org.junit.jupiter.api.Test;

class CreationSitesTest {
  /** Infrastructure by being a class loader, wherever it comes from. */
  static final class Loader extends URLClassLoader {
    Loader() {
      super(new URL[0]);
    }
  }

  @Test
  void libraryFramesAreDecidedByWhereTheClassComesFrom() {
    List<String> none = Collections.emptyList();
    assertTrue(CreationSites.isLibrary(String.class, none), "the JDK");
    assertTrue(CreationSites.isLibrary(java.sql.Date.class, none), "the JDK's platform loader");
    assertFalse(CreationSites.isLibrary(CreationSitesTest.class, none), "application code");
    assertTrue(CreationSites.isLibrary(Loader.class, none), "a class loader");
    assertTrue(
        CreationSites.isLibrary(
            CreationSitesTest.class, List.of("dev.nativemem.handles.tracking.CreationSitesT")),
        "a skip prefix");
  }

  @Test
  void captureHeadsTheStackWithTheFirstApplicationFrame() {
    // This class is in nativemem's own package, so its frames are dropped: the first frame left
    // is JUnit's, loaded by the application class loader, hence application code.
    String stack = CreationSites.capture();
    String headline = CreationSites.applicationFrame(stack);
    assertTrue(headline.startsWith("org.junit."), stack);
    String frames = CreationSites.frames(stack);
    assertTrue(frames.startsWith("\tat " + headline + "\n"), frames);
    assertEquals(stack, "created at " + headline + "\n" + frames);
  }

  @Test
  void stackWithoutHeadlineFallsBackToNames() {
    String stack =
        "\tat java.base/java.util.zip.Inflater.<init>(Inflater.java:1)\n"
            + "\tat org.rocksdb.RocksDB.open(RocksDB.java:2)\n"
            + "\tat com.example.App.main(App.java:3)\n";
    assertEquals("com.example.App.main(App.java:3)", CreationSites.applicationFrame(stack));
    assertEquals(stack, CreationSites.frames(stack));
  }
}
