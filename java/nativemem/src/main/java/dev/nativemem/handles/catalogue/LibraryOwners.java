package dev.nativemem.handles.catalogue;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.lang.ref.WeakReference;
import java.net.JarURLConnection;
import java.net.URL;
import java.net.URLConnection;
import java.security.CodeSource;
import java.util.Enumeration;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ConcurrentHashMap;
import java.util.jar.Attributes;
import java.util.jar.JarEntry;
import java.util.jar.JarFile;
import java.util.jar.Manifest;

/**
 * The library a creation site's first application frame belongs to, as its own jar names itself:
 * the Maven coordinates of its {@code META-INF/maven/<group>/<artifact>/pom.properties}, else its
 * manifest's {@code Implementation-Title} (and {@code Implementation-Version}). Classes from a
 * directory (an application's own classes, Spring Boot's {@code BOOT-INF/classes}) or from the jar
 * the JVM was started with belong to the application: null. The headline classes are noted when a
 * stack is captured (a weak reference, no reading inside the hook) and their jar read when a report
 * is built, once per class.
 */
public final class LibraryOwners {
  /** Headline classes noted at most; later ones read as the application's. */
  static final int MAX_CLASSES = 4096;

  private static final Map<String, WeakReference<Class<?>>> NOTED = new ConcurrentHashMap<>();

  private static final ClassValue<String> OWNER =
      new ClassValue<String>() {
        @Override
        protected String computeValue(Class<?> type) {
          return read(type);
        }
      };

  private LibraryOwners() {}

  /** Notes the class of a creation site's headline frame (cheap: no jar is read here). */
  public static void note(Class<?> type) {
    if (NOTED.size() < MAX_CLASSES && !NOTED.containsKey(type.getName())) {
      NOTED.putIfAbsent(type.getName(), new WeakReference<>(type));
    }
  }

  /**
   * The library that owns the frame {@code frame} ({@code [loader//]class.method(File.java:N)}),
   * such as {@code org.thymeleaf:thymeleaf 3.1.3.RELEASE}; null when it is the application's or
   * unknown.
   */
  public static String ofFrame(String frame) {
    if (frame == null) {
      return null;
    }
    String call = frame.substring(frame.lastIndexOf('/') + 1);
    int paren = call.indexOf('(');
    String method = paren < 0 ? call : call.substring(0, paren);
    int dot = method.lastIndexOf('.');
    if (dot <= 0) {
      return null;
    }
    WeakReference<Class<?>> ref = NOTED.get(method.substring(0, dot));
    Class<?> type = ref == null ? null : ref.get();
    return type == null ? null : OWNER.get(type);
  }

  /** What {@code type}'s jar says it is; null for the application's classes. */
  static String read(Class<?> type) {
    try {
      CodeSource source = type.getProtectionDomain().getCodeSource();
      URL location = source == null ? null : source.getLocation();
      if (location == null || isApplication(location.toString())) {
        return null;
      }
      String root = location.toString();
      URL jar = new URL(root.startsWith("jar:") ? root : "jar:" + root + "!/");
      URLConnection connection = jar.openConnection();
      if (!(connection instanceof JarURLConnection)) {
        return null;
      }
      connection.setUseCaches(false); // a copy of our own, closed here
      try (JarFile file = ((JarURLConnection) connection).getJarFile()) {
        return named(file);
      }
    } catch (IOException | RuntimeException e) {
      return null;
    }
  }

  /**
   * {@code group:artifact version} of the jar's {@code pom.properties} (the first, for a jar that
   * carries several), else its manifest's {@code Implementation-Title} and version; null if none.
   */
  static String named(JarFile file) throws IOException {
    for (Enumeration<JarEntry> entries = file.entries(); entries.hasMoreElements(); ) {
      JarEntry entry = entries.nextElement();
      String name = entry.getName();
      if (name.startsWith("META-INF/maven/") && name.endsWith("/pom.properties")) {
        Properties p = new Properties();
        try (InputStream in = file.getInputStream(entry)) {
          p.load(new ByteArrayInputStream(in.readNBytes(LibraryVersions.MAX_PROPERTIES_BYTES)));
        }
        String group = p.getProperty("groupId");
        String artifact = p.getProperty("artifactId");
        if (group != null && artifact != null) {
          String version = p.getProperty("version");
          return group.trim()
              + ":"
              + artifact.trim()
              + (version == null ? "" : " " + version.trim());
        }
      }
    }
    Manifest manifest = file.getManifest();
    Attributes main = manifest == null ? null : manifest.getMainAttributes();
    String title = main == null ? null : main.getValue(Attributes.Name.IMPLEMENTATION_TITLE);
    if (title == null || title.trim().isEmpty()) {
      return null;
    }
    String version = main.getValue(Attributes.Name.IMPLEMENTATION_VERSION);
    return title.trim() + (version == null || version.trim().isEmpty() ? "" : " " + version.trim());
  }

  /**
   * Whether classes at {@code location} are the application's own: a directory (a build's classes,
   * Spring Boot's {@code BOOT-INF/classes/}), or the jar named by {@code java -jar}.
   */
  static boolean isApplication(String location) {
    return isApplication(location, System.getProperty("sun.java.command", ""));
  }

  /** {@link #isApplication(String)} for the JVM started by {@code command}. */
  static boolean isApplication(String location, String command) {
    if (location.endsWith("/") && !location.endsWith(".jar!/")) {
      return true;
    }
    String main = command.split(" ", 2)[0];
    if (!main.endsWith(".jar")) {
      return false;
    }
    return main.startsWith("/") ? location.equals("file:" + main) : location.endsWith("/" + main);
  }
}
