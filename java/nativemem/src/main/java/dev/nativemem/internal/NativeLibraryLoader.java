package dev.nativemem.internal;

import dev.nativemem.base.NativeMemoryException;
import dev.nativemem.base.Setting;
import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.net.URISyntaxException;
import java.net.URL;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.zip.ZipEntry;
import java.util.zip.ZipFile;

/**
 * Loads {@code libnativemem.so} once per class loader.
 *
 * <p>From {@code -Dnativemem.library.path} when set (no fallback), else from the jar through a
 * private base directory ({@code -Dnativemem.tmpdir}, default {@code
 * java.io.tmpdir/nativemem-<user>}, mode 0700, owned by this process's user, with no other user
 * able to write it or any directory above it unless sticky). From a jar file, every JVM of the user
 * shares one extracted copy per library content ({@link SharedLibraryCache}). A class loader that
 * finds that copy taken by another class loader of its JVM (the JVM refuses one library file in
 * two, as happens on every Flink job restart), or a jar that is not a file (Spring Boot's nested
 * jars), gets a private per-process copy; those stay while the process lives, so profiles can still
 * symbolize them, and directories whose JVM is gone (their lock is free) are removed on the next
 * such load.
 */
public final class NativeLibraryLoader {
  public static final String LIBRARY_PATH_PROPERTY = Setting.LIBRARY_PATH.property();
  public static final String TMPDIR_PROPERTY = Setting.TMPDIR.property();
  static final String LIBRARY_FILE = "libnativemem.so";
  static final List<String> SUPPORTED_PLATFORMS = List.of("linux-x86_64", "linux-aarch64");
  private static volatile Path loaded;
  private static volatile String jarIdentity;
  private static volatile boolean contentKeyWanted;

  /** The library being checked, while its version is read (by this thread, holding the lock). */
  private static Path checking;

  /** Why the library this class loader loaded cannot be used; every later call fails alike. */
  private static String unusable;

  private NativeLibraryLoader() {}

  /**
   * Loads the library if this class loader has not yet done so.
   *
   * @throws UnsupportedOperationException on an OS or architecture the jar has no library for
   * @throws NativeMemoryException if the library cannot be found, extracted or loaded
   */
  public static void load() {
    if (loaded == null) {
      loadOnce();
    }
  }

  private static synchronized void loadOnce() {
    if (loaded != null || checking != null) {
      return; // loaded, or NativeBridge's initializer calling back while the version is read
    }
    if (unusable != null) {
      throw new NativeMemoryException(unusable);
    }
    String platform = platform(System.getProperty("os.name"), System.getProperty("os.arch"));
    String explicit = Setting.LIBRARY_PATH.value();
    Path path = explicit != null ? loadExplicit(explicit) : loadFromJar(platform);
    String nativeVersion;
    checking = path;
    try {
      nativeVersion = NativeBridge.version();
    } finally {
      checking = null;
    }
    String javaVersion = javaVersion();
    if (!javaVersion.equals(nativeVersion)) {
      unusable = versionMismatch(javaVersion, nativeVersion, path, explicit != null);
      throw new NativeMemoryException(unusable);
    }
    loaded = path;
    SettingsInEffect.log();
  }

  /**
   * The JSON both sides exchange changes between versions, so a library of another version is
   * refused when it loads, before any call could misread it.
   */
  static String versionMismatch(
      String javaVersion, String nativeVersion, Path library, boolean explicit) {
    return "nativemem's Java classes are version "
        + javaVersion
        + " but the native library "
        + library
        + " is version "
        + nativeVersion
        + "; they must be the same version: "
        + (explicit
            ? "remove -D"
                + LIBRARY_PATH_PROPERTY
                + " or point it at the libnativemem.so built"
                + " with nativemem "
                + javaVersion
            : "the class path holds parts of two nativemem versions (two nativemem jars, or a"
                + " jar that shades an older one): keep one");
  }

  /** The file this class loader loaded the library from. */
  public static Path loadedPath() {
    load();
    return loaded;
  }

  /** This jar's version, as Maven wrote it into {@code nativemem.properties}. */
  public static String javaVersion() {
    return BuildProperties.version();
  }

  /** Maps {@code os.name}/{@code os.arch} to the jar's platform directory name. */
  static String platform(String osName, String osArch) {
    String os = osName == null ? "" : osName.toLowerCase(Locale.ROOT);
    String arch = osArch == null ? "" : osArch.toLowerCase(Locale.ROOT);
    if (arch.equals("amd64") || arch.equals("x86_64")) {
      arch = "x86_64";
    } else if (arch.equals("arm64")) {
      arch = "aarch64";
    }
    String platform = (os.startsWith("linux") ? "linux" : os) + "-" + arch;
    if (!SUPPORTED_PLATFORMS.contains(platform)) {
      throw new UnsupportedOperationException(
          "nativemem supports "
              + String.join(", ", SUPPORTED_PLATFORMS)
              + "; this JVM runs on os.name='"
              + osName
              + "', os.arch='"
              + osArch
              + "'");
    }
    return platform;
  }

  private static Path loadExplicit(String value) {
    Path path = Paths.get(value).toAbsolutePath();
    if (!Files.isRegularFile(path)) {
      throw new NativeMemoryException(
          "-D"
              + LIBRARY_PATH_PROPERTY
              + "="
              + value
              + " does not name a file; point it at libnativemem.so or remove it to use the"
              + " library inside the jar");
    }
    try {
      System.load(path.toString());
      return path;
    } catch (UnsatisfiedLinkError e) {
      if (isTakenByAnotherClassLoader(e)) {
        // Another class loader holds this file: load a private copy instead.
        try (InputStream in = Files.newInputStream(path)) {
          return loadCopy(in);
        } catch (IOException io) {
          throw new NativeMemoryException("cannot copy " + path + ": " + io.getMessage(), io);
        }
      }
      throw new NativeMemoryException(
          "-D" + LIBRARY_PATH_PROPERTY + "=" + value + " cannot be loaded: " + e.getMessage(), e);
    }
  }

  /** The resource name of {@code platform}'s library in the jar. */
  private static String libraryEntry(String platform) {
    return "/dev/nativemem/native/" + platform + "/" + LIBRARY_FILE;
  }

  /**
   * A supported platform whose library this jar lacks (a jar built where a cross toolchain was
   * missing): the one sentence names what the jar carries.
   */
  static String missingLibrary(String platform, List<String> carried) {
    return "this nativemem jar carries no native library for "
        + platform
        + " (it carries "
        + (carried.isEmpty() ? "none" : String.join(", ", carried))
        + "); use the released jar, which carries "
        + String.join(", ", SUPPORTED_PLATFORMS)
        + ", build it with the aarch64 cross toolchain installed (CONTRIBUTING.md), or set -D"
        + LIBRARY_PATH_PROPERTY;
  }

  private static Path loadFromJar(String platform) {
    String entry = libraryEntry(platform).substring(1);
    URL url = NativeLibraryLoader.class.getResource("/" + entry);
    if (url == null) {
      List<String> carried = new ArrayList<>();
      for (String other : SUPPORTED_PLATFORMS) {
        if (NativeLibraryLoader.class.getResource(libraryEntry(other)) != null) {
          carried.add(other);
        }
      }
      throw new UnsupportedOperationException(missingLibrary(platform, carried));
    }
    try {
      Path jar = jarFileOf(url);
      if (jar != null) {
        try (ZipFile zip = new ZipFile(jar.toFile())) {
          BuildProperties.readFrom(zip);
          ZipEntry library = zip.getEntry(entry);
          if (library != null && library.getCrc() != -1 && library.getSize() != -1) {
            Path shared = loadShared(zip, library);
            jarIdentity = contentKeyWanted ? JarContentKey.of(zip) : null;
            return shared;
          }
        }
      }
      try (InputStream in = url.openStream()) {
        return loadCopy(in);
      }
    } catch (IOException e) {
      throw new NativeMemoryException(
          "cannot extract "
              + entry
              + ": "
              + e.getMessage()
              + "; set -D"
              + TMPDIR_PROPERTY
              + " to a writable directory",
          e);
    }
  }

  /** The jar file a {@code jar:file:} resource URL points into; null for anything else. */
  private static Path jarFileOf(URL url) {
    String spec = url.toString();
    int bang = spec.indexOf("!/");
    if (!spec.startsWith("jar:file:") || bang < 0 || spec.indexOf("!/", bang + 2) >= 0) {
      return null; // a directory, or a jar nested in a jar (Spring Boot): no file to name
    }
    try {
      return Paths.get(new URI(spec.substring("jar:".length(), bang)));
    } catch (URISyntaxException | IllegalArgumentException e) {
      return null;
    }
  }

  /**
   * Loads the copy every JVM of this user shares ({@link SharedLibraryCache}); a class loader of
   * this JVM that finds it taken by another one gets a private copy instead.
   */
  private static Path loadShared(ZipFile jar, ZipEntry library) throws IOException {
    Path file = SharedLibraryCache.fileFor(PrivateBase.get(), jar, library);
    try {
      System.load(file.toString());
      return file;
    } catch (UnsatisfiedLinkError e) {
      if (!isTakenByAnotherClassLoader(e)) {
        throw unloadable(file, e);
      }
      try (InputStream in = jar.getInputStream(library)) {
        return loadCopy(in);
      }
    }
  }

  /**
   * "already loaded in another classloader" (JDK 17 and later; older JDKs wrote "class loader").
   */
  private static boolean isTakenByAnotherClassLoader(UnsatisfiedLinkError e) {
    return String.valueOf(e.getMessage()).matches("(?s).*another class ?loader.*");
  }

  private static NativeMemoryException unloadable(Path file, UnsatisfiedLinkError e) {
    return new NativeMemoryException(
        "cannot load "
            + file
            + ": "
            + e.getMessage()
            + "; if the directory is mounted noexec, set -D"
            + TMPDIR_PROPERTY
            + " to a directory that allows executables",
        e);
  }

  /** Writes {@code library} into a per-process copy ({@link PrivateCopies}) and loads that. */
  private static Path loadCopy(InputStream library) throws IOException {
    Path target = PrivateCopies.write(library);
    try {
      System.load(target.toString());
    } catch (UnsatisfiedLinkError e) {
      throw unloadable(target, e);
    }
    return target;
  }

  /**
   * The checked private base directory ({@code -Dnativemem.tmpdir}), for the agent's files that
   * share the library's trust.
   */
  public static Path privateBase() throws IOException {
    return PrivateBase.get();
  }

  /**
   * Asks for {@link #jarIdentity} at the load to come (the jar is open then): the agent's kept
   * classes need it, and no one else pays its 2 ms of CPU.
   */
  public static void wantJarIdentity() {
    contentKeyWanted = true;
  }

  /**
   * The jar this class loader loaded the library from, by its content ({@link JarContentKey}); null
   * when the library came from elsewhere or {@link #wantJarIdentity} was not called before it.
   */
  public static String jarIdentity() {
    load();
    return jarIdentity;
  }
}
