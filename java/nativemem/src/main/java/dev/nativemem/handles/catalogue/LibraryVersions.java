package dev.nativemem.handles.catalogue;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.URL;
import java.security.CodeSource;
import java.util.ArrayList;
import java.util.Enumeration;
import java.util.List;
import java.util.Properties;
import java.util.regex.Pattern;

/**
 * The version of the library a class was loaded from, as its jar states it, and the comparison of
 * release numbers. Never guesses: a jar that states no version reads as unknown (null).
 */
public final class LibraryVersions {
  /** pom.properties and version files are a few hundred bytes; more is not one of them. */
  static final int MAX_PROPERTIES_BYTES = 64 * 1024;

  private LibraryVersions() {}

  /**
   * The version of {@code type}'s library, or null: the {@code Implementation-Version} of its jar's
   * manifest (for its package), else {@code version} of {@code
   * META-INF/maven/<group>/<artifact>/pom.properties} in the same jar, else {@code version} of
   * {@code resource} as its class loader finds it (for libraries that publish only such a file, as
   * Kafka's {@code kafka/kafka-version.properties}), else the version in the name of its own jar
   * when that name is exactly Maven's {@code <artifact>-<version>.jar} (forstjni's jar states its
   * version nowhere else).
   */
  static String of(Class<?> type, String artifact, String resource) {
    Package pkg = type.getPackage();
    String stated = pkg == null ? null : pkg.getImplementationVersion();
    if (stated != null && !stated.trim().isEmpty()) {
      return stated.trim();
    }
    if (artifact != null) {
      String pom = "META-INF/maven/" + artifact.replace(':', '/') + "/pom.properties";
      String version = versionIn(type, pom, true);
      if (version != null) {
        return version;
      }
    }
    String version = resource == null ? null : versionIn(type, resource, false);
    return version != null || artifact == null ? version : versionInJarName(type, artifact);
  }

  /** A release number as Maven names jars: digits first, then digits, letters, dots, dashes. */
  private static final Pattern RELEASE = Pattern.compile("[0-9][0-9A-Za-z.\\-]{0,63}");

  /**
   * {@code <version>} of {@code type}'s jar when its file is named {@code
   * <artifactId>-<version>.jar} for the {@code group:artifactId} given, as Maven stores and copies
   * it; null for any other name.
   */
  static String versionInJarName(Class<?> type, String artifact) {
    try {
      CodeSource source = type.getProtectionDomain().getCodeSource();
      if (source == null || source.getLocation() == null) {
        return null;
      }
      return versionInJarName(source.getLocation().getPath(), artifact);
    } catch (RuntimeException e) {
      return null;
    }
  }

  /** {@link #versionInJarName(Class, String)} of a jar's path. */
  public static String versionInJarName(String path, String artifact) {
    String file = path.substring(path.lastIndexOf('/') + 1);
    String prefix = artifact.substring(artifact.indexOf(':') + 1) + "-";
    if (!file.startsWith(prefix) || !file.endsWith(".jar")) {
      return null;
    }
    String version = file.substring(prefix.length(), file.length() - ".jar".length());
    return RELEASE.matcher(version).matches() ? version : null;
  }

  private static String versionIn(Class<?> type, String name, boolean sameJar) {
    try {
      ClassLoader loader = type.getClassLoader();
      URL url = loader == null ? ClassLoader.getSystemResource(name) : loader.getResource(name);
      if (url != null && sameJar) {
        url = inOwnJar(type, loader, url, name);
      }
      if (url == null) {
        return null;
      }
      byte[] bytes;
      try (InputStream in = url.openStream()) {
        bytes = in.readNBytes(MAX_PROPERTIES_BYTES);
      }
      Properties properties = new Properties();
      properties.load(new ByteArrayInputStream(bytes));
      String version = properties.getProperty("version");
      return version == null || version.trim().isEmpty() ? null : version.trim();
    } catch (IOException | RuntimeException e) {
      return null;
    }
  }

  /**
   * {@code name} in {@code type}'s own jar: {@code first} (what the class loader finds first) if it
   * is there, else the copy in that jar that another one shadows; null if the jar has none.
   */
  private static URL inOwnJar(Class<?> type, ClassLoader loader, URL first, String name)
      throws IOException {
    CodeSource source = type.getProtectionDomain().getCodeSource();
    if (source == null || source.getLocation() == null) {
      return null;
    }
    String jar = source.getLocation().toString();
    if (isIn(first.toString(), jar, name)) {
      return first;
    }
    Enumeration<URL> all =
        loader == null ? ClassLoader.getSystemResources(name) : loader.getResources(name);
    while (all.hasMoreElements()) {
      URL url = all.nextElement();
      if (isIn(url.toString(), jar, name)) {
        return url;
      }
    }
    return null; // only other jars' files: not this class's version
  }

  /**
   * Whether {@code resource} (a resource URL) is {@code name} inside exactly the code source {@code
   * location}: {@code jar:<location>!/<name>} for a jar, {@code <location><name>} for a directory
   * or a nested jar whose location already ends in {@code !/} (Spring Boot). The whole URL is
   * compared: {@code x.jar.bak} is not {@code x.jar}, nor {@code /b/x.jar} {@code /a/x.jar}.
   */
  static boolean isIn(String resource, String location, String name) {
    return resource.equals("jar:" + location + "!/" + name)
        || (location.endsWith("/") && resource.equals(location + name));
  }

  /**
   * Compares release numbers by their leading numeric parts ({@code 1.20.4} before {@code 1.20.10};
   * missing parts are 0). A qualifier such as {@code -SNAPSHOT} or {@code -rc1} is ignored: a
   * pre-release counts as its release.
   */
  static int compare(String a, String b) {
    List<Long> x = numbers(a);
    List<Long> y = numbers(b);
    for (int i = 0; i < Math.max(x.size(), y.size()); i++) {
      long p = i < x.size() ? x.get(i) : 0;
      long q = i < y.size() ? y.get(i) : 0;
      if (p != q) {
        return Long.compare(p, q);
      }
    }
    return 0;
  }

  private static List<Long> numbers(String version) {
    List<Long> parts = new ArrayList<>();
    for (String part : version.trim().split("\\.")) {
      int digits = 0;
      while (digits < part.length() && digits < 18 && Character.isDigit(part.charAt(digits))) {
        digits++;
      }
      if (digits == 0) {
        break;
      }
      parts.add(Long.parseLong(part.substring(0, digits)));
      if (digits < part.length()) {
        break; // "0-SNAPSHOT": the number, then the qualifier ends the release number
      }
    }
    return parts;
  }
}
