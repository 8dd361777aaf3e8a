package dev.nativemem.apps.harness;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.List;

/**
 * The stack frame of an application's line, found by a marker comment in its source, so that no
 * test hard-codes a line number: {@code // nativemem-test: <marker>} at the end of the line.
 */
public final class SourceLine {
  private SourceLine() {}

  /**
   * {@code pkg.Type.method(Type.java:N)}, N being the line of {@code className}'s source (under the
   * module's {@code src/main/java}) that carries the marker. By name: the test may not be able to
   * load the application's classes.
   */
  public static String frame(String className, String method, String marker) throws IOException {
    String outer =
        className.contains("$") ? className.substring(0, className.indexOf('$')) : className;
    Path source =
        Paths.get(System.getProperty("app.source", "src/main/java"))
            .resolve(outer.replace('.', '/') + ".java");
    List<String> lines = Files.readAllLines(source);
    String comment = "// nativemem-test: " + marker;
    int found = -1;
    for (int i = 0; i < lines.size(); i++) {
      if (lines.get(i).trim().endsWith(comment)) {
        if (found >= 0) {
          throw new IllegalStateException("marker '" + marker + "' is twice in " + source);
        }
        found = i + 1;
      }
    }
    if (found < 0) {
      throw new IllegalStateException("no line ends with '" + comment + "' in " + source);
    }
    String file = source.getFileName().toString();
    return className + "." + method + "(" + file + ":" + found + ")";
  }
}
