package dev.nativemem.tests.handles.agent;

import static dev.nativemem.tests.handles.SourceLine.here;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.nativemem.handles.HandleScope;
import dev.nativemem.handles.NativeHandles;
import dev.nativemem.tests.handles.BehaviourScenarios;
import java.io.InputStream;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The third incident: streams from getResourceAsStream hold an Inflater until closed. */
class ResourceStreamTest {
  private static final int STREAMS = 5;

  @TempDir Path dir;

  private Path jarWithResource() throws Exception {
    return BehaviourScenarios.jarWithResource(dir);
  }

  @Test
  void unclosedResourceStreamsAreOpenInflatersAtTheirLine() throws Exception {
    Path jar = jarWithResource();
    List<InputStream> unclosed = new ArrayList<>();
    int line = -1;
    try (HandleScope scope = NativeHandles.scope("resources")) {
      URLClassLoader loader = new URLClassLoader(new URL[] {jar.toUri().toURL()}, null);
      for (int i = 0; i < STREAMS; i++) {
        line = here() + 1;
        InputStream in = loader.getResourceAsStream("data.txt");
        in.read();
        unclosed.add(in);
      }
      String failure = scope.check();
      assertTrue(failure != null, "open streams must be reported");
      assertTrue(
          failure.contains(
              STREAMS
                  + " open (never closed) Inflater, created at "
                  + ResourceStreamTest.class.getName()
                  + ".unclosedResourceStreamsAreOpenInflatersAtTheirLine(ResourceStreamTest.java:"
                  + line
                  + ")"),
          failure);
      assertEquals(STREAMS, scope.open(), scope.toString());
      // The fix: close the streams. Their Inflaters go back into the jar's cache, which is the
      // loader's to free, not the code that read through it.
      for (InputStream in : unclosed) {
        in.close();
      }
      assertNull(scope.check(), "Inflaters cached by the open jar are not a leak of the reader");
      assertEquals(STREAMS, scope.transferred(), "handed to the jar's cache: " + scope);
      loader.close();
      assertNull(scope.check());
    }
  }

  /**
   * The JDK keeps jars opened through {@code jar:} URLs for the life of the process, and their
   * Inflaters with them (this is how {@code RocksDB.loadLibrary()} reads its library): the first
   * code to read such a jar must not be blamed for that cache.
   */
  @Test
  void inflaterCachedByTheJdkIsNotTheReadersLeak() throws Exception {
    URL resource = new URL("jar:" + jarWithResource().toUri() + "!/data.txt");
    try (HandleScope scope = NativeHandles.scope("jdk-jar-cache")) {
      try (InputStream in = resource.openStream()) {
        assertEquals(64 * 1024, in.readAllBytes().length);
      }
      assertNull(scope.check());
      assertEquals(0, scope.open(), scope.toString());
      int line = here() + 1;
      InputStream unclosed = resource.openStream();
      unclosed.read();
      String failure = scope.check();
      assertTrue(
          failure != null
              && failure.contains(
                  "1 open (never closed) Inflater, created at "
                      + ResourceStreamTest.class.getName()
                      + ".inflaterCachedByTheJdkIsNotTheReadersLeak(ResourceStreamTest.java:"
                      + line
                      + ")"),
          failure);
      unclosed.close();
      assertNull(scope.check());
    }
  }

  @Test
  void fixedVariantWithTryWithResourcesHasNoLeak() throws Exception {
    Path jar = jarWithResource();
    try (HandleScope scope = NativeHandles.scope("resources-fixed")) {
      try (URLClassLoader loader = new URLClassLoader(new URL[] {jar.toUri().toURL()}, null)) {
        for (int i = 0; i < STREAMS; i++) {
          try (InputStream in = loader.getResourceAsStream("data.txt")) {
            assertEquals(64 * 1024, in.readAllBytes().length);
          }
        }
      }
      assertNull(scope.check());
    }
  }
}
