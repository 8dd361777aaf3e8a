package dev.nativemem.cli;

import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.MalformedURLException;
import java.net.URL;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;

/**
 * A class path as {@code java -cp} reads it, for the commands that inspect an application's
 * libraries: ':'-separated elements, each a jar, a directory of classes, or {@code dir/*} (every
 * {@code .jar}/{@code .JAR} in {@code dir}, not its subdirectories). A directory also brings the
 * jars directly in it, since a library directory ({@code lib}) is what an operator has at hand. A
 * listing is bounded: more than {@link #MAX_JARS} jars is an error that says so.
 */
final class ClassPathElements {
  /** The most jars one class path expands to; far more than any application's {@code lib/}. */
  static final int MAX_JARS = 10_000;

  private ClassPathElements() {}

  /** The URLs a class loader reads {@code classPath} from, in the order {@code java} would. */
  static List<URL> of(String classPath) {
    List<URL> urls = new ArrayList<>();
    int[] jars = {0};
    for (String raw : classPath.split(File.pathSeparator)) {
      String element = raw.trim();
      if (element.isEmpty()) {
        continue;
      }
      if (element.equals("*") || element.endsWith(File.separator + "*")) {
        String dir = element.substring(0, element.length() - 1);
        addJarsIn(Paths.get(dir.isEmpty() ? "." : dir), urls, jars, element);
        continue;
      }
      Path path = Paths.get(element);
      urls.add(url(path));
      if (Files.isDirectory(path)) {
        addJarsIn(path, urls, jars, element);
      }
    }
    return urls;
  }

  private static void addJarsIn(Path dir, List<URL> urls, int[] jars, String element) {
    if (!Files.isDirectory(dir)) {
      return; // java -cp ignores an element that names nothing
    }
    List<Path> found = new ArrayList<>();
    try (DirectoryStream<Path> entries = Files.newDirectoryStream(dir)) {
      for (Path entry : entries) {
        String name = entry.getFileName().toString();
        if ((name.endsWith(".jar") || name.endsWith(".JAR")) && Files.isRegularFile(entry)) {
          if (++jars[0] > MAX_JARS) {
            throw new IllegalArgumentException(
                "the class path element '"
                    + element
                    + "' brings more than "
                    + MAX_JARS
                    + " jars: name the application's library directory, not a directory above it");
          }
          found.add(entry);
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException("cannot list the class path element '" + element + "'", e);
    }
    found.sort(null); // the directory's order is the file system's: make it stable
    for (Path jar : found) {
      urls.add(url(jar));
    }
  }

  private static URL url(Path path) {
    try {
      return path.toUri().toURL();
    } catch (MalformedURLException e) {
      throw new IllegalArgumentException("cannot read the class path element '" + path + "'", e);
    }
  }
}
