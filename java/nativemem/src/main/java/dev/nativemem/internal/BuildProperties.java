package dev.nativemem.internal;

import dev.nativemem.base.NativeMemoryException;
import java.io.IOException;
import java.io.InputStream;
import java.util.Properties;
import java.util.zip.ZipEntry;
import java.util.zip.ZipFile;

/** What Maven wrote into {@code nativemem.properties}: this jar's version. */
final class BuildProperties {
  private static final String PROPERTIES = "dev/nativemem/nativemem.properties";

  private static Properties properties;

  private BuildProperties() {}

  /** This jar's version. */
  static String version() {
    return properties().getProperty("version", "unknown");
  }

  private static synchronized Properties properties() {
    if (properties != null) {
      return properties;
    }
    try (InputStream in = BuildProperties.class.getResourceAsStream("/" + PROPERTIES)) {
      return properties = read(in);
    } catch (IOException e) {
      throw new NativeMemoryException("cannot read nativemem.properties: " + e.getMessage(), e);
    }
  }

  /**
   * Reads them from {@code jar}, already open to load the library: through the class's resource
   * URL, a start would open the jar once more (about 10 ms of CPU, docs/performance.md,
   * "Start-up").
   */
  static synchronized void readFrom(ZipFile jar) throws IOException {
    if (properties == null) {
      ZipEntry props = jar.getEntry(PROPERTIES);
      try (InputStream in = props == null ? null : jar.getInputStream(props)) {
        properties = read(in);
      }
    }
  }

  private static Properties read(InputStream in) throws IOException {
    if (in == null) {
      throw new NativeMemoryException(
          PROPERTIES
              + " is missing from the class path; the nativemem jar is incomplete: rebuild it with"
              + " 'mvn package'");
    }
    Properties read = new Properties();
    read.load(in);
    return read;
  }
}
