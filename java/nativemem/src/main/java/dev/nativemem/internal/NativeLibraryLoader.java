package dev.nativemem.internal;

import dev.nativemem.NativeMemoryException;
import dev.nativemem.Setting;
import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.net.URISyntaxException;
import java.net.URL;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.OpenOption;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Enumeration;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Properties;
import java.util.Set;
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
  private static final String PROPERTIES = "dev/nativemem/nativemem.properties";
  static final List<String> SUPPORTED_PLATFORMS = List.of("linux-x86_64", "linux-aarch64");
  private static final String PROCESS_DIR_PREFIX = "pid";
  private static final Set<PosixFilePermission> OWNER_ONLY =
      PosixFilePermissions.fromString("rwx------");

  private static final String LOCK_FILE = "lock";

  private static volatile Path loaded;
  private static Path privateBase;
  private static volatile String jarIdentity;
  private static volatile boolean contentKeyWanted;
  private static Properties properties;

  /** The library being checked, while its version is read (by this thread, holding the lock). */
  private static Path checking;

  /** Why the library this class loader loaded cannot be used; every later call fails alike. */
  private static String unusable;

  /** Held (never read) while this class loader lives: tells other JVMs the directory is in use. */
  @SuppressWarnings("unused")
  private static FileChannel lock;

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
    return properties().getProperty("version", "unknown");
  }

  private static synchronized Properties properties() {
    if (properties != null) {
      return properties;
    }
    try (InputStream in = NativeLibraryLoader.class.getResourceAsStream("/" + PROPERTIES)) {
      return properties = read(in);
    } catch (IOException e) {
      throw new NativeMemoryException("cannot read nativemem.properties: " + e.getMessage(), e);
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

  private static Path loadFromJar(String platform) {
    String entry = "dev/nativemem/native/" + platform + "/" + LIBRARY_FILE;
    URL url = NativeLibraryLoader.class.getResource("/" + entry);
    if (url == null) {
      throw new UnsupportedOperationException(
          "this nativemem jar carries no native library for "
              + platform
              + " ("
              + entry
              + " is missing); build the jar on "
              + platform
              + " or set -D"
              + LIBRARY_PATH_PROPERTY);
    }
    try {
      Path jar = jarFileOf(url);
      if (jar != null) {
        try (ZipFile zip = new ZipFile(jar.toFile())) {
          // Read here, from the jar just opened: through the class's resource URL, a start would
          // open the jar once more (about 10 ms of CPU, docs/performance.md, "Start-up").
          synchronized (NativeLibraryLoader.class) {
            if (properties == null) {
              ZipEntry props = zip.getEntry(PROPERTIES);
              try (InputStream in = props == null ? null : zip.getInputStream(props)) {
                properties = read(in);
              }
            }
          }
          ZipEntry library = zip.getEntry(entry);
          if (library != null && library.getCrc() != -1 && library.getSize() != -1) {
            Path shared = loadShared(zip, library);
            jarIdentity = contentKeyWanted ? contentKey(zip) : null;
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

  /**
   * A key of the jar's whole content that costs no inflating and no digest set-up: a 128-bit hash
   * (two lanes of MurmurHash3's 64-bit finalizer) over every entry's name, size and the CRC-32 of
   * its bytes, as the central directory (read anyway to open the jar) states them, in its order.
   * Two builds share it only if every changed entry keeps its size and CRC-32 (a chance of 2^-32
   * per entry); size and modification time of the jar, which image builders fix for every file,
   * take no part. Not a defence against a hostile jar: whoever writes the jar runs its code.
   */
  static String contentKey(ZipFile zip) {
    long a = 0x243f6a8885a308d3L;
    long b = 0x13198a2e03707344L;
    for (Enumeration<? extends ZipEntry> entries = zip.entries(); entries.hasMoreElements(); ) {
      ZipEntry entry = entries.nextElement();
      long named = (entry.getCrc() << 32) | (entry.getName().hashCode() & 0xffffffffL);
      a = mix(a ^ named) + entry.getSize();
      b = mix(b + entry.getSize()) ^ named;
    }
    return hex(mix(a)) + hex(mix(b ^ a));
  }

  /** 16 hex digits (no {@code String.format}: its parser would cost a JVM start more than this). */
  private static String hex(long value) {
    String digits = Long.toHexString(value);
    return "0000000000000000".substring(digits.length()) + digits;
  }

  /** MurmurHash3's 64-bit finalizer: every input bit changes about half the output bits. */
  private static long mix(long k) {
    k ^= k >>> 33;
    k *= 0xff51afd7ed558ccdL;
    k ^= k >>> 33;
    k *= 0xc4ceb9fe1a85ec53L;
    return k ^ (k >>> 33);
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
    Path file = SharedLibraryCache.fileFor(privateBase(), jar, library);
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

  /**
   * Writes the library into a fresh per-process directory and loads it from there. The directory
   * holds a {@code lock} file this JVM keeps locked while it lives: other JVMs sharing the base
   * directory tell a live one from a dead one by the lock, which works across PID namespaces
   * (containers sharing a volume), where a process id means nothing.
   */
  private static Path loadCopy(InputStream library) throws IOException {
    Path base = privateBase();
    removeDirectoriesOfDeadProcesses(base);
    Path dir = createProcessDirectory(base);
    holdLock(dir);
    // A fresh 0700 directory of ours: fixed names inside it cannot clash or be planted.
    Path target = dir.resolve(LIBRARY_FILE);
    PartialFile.writeThenMove(target, PartialFile.of(library), "r-x------");
    try {
      System.load(target.toString());
    } catch (UnsatisfiedLinkError e) {
      throw unloadable(target, e);
    }
    return target;
  }

  /**
   * Creates {@code base/pid<N>-<unique>}, mode 0700. Not {@code Files.createTempDirectory}: its
   * {@code SecureRandom} costs a JVM start about 40 ms of CPU, and the base directory is private,
   * so the name needs to be unique, not unguessable; an existing name is skipped.
   */
  private static Path createProcessDirectory(Path base) throws IOException {
    String prefix = PROCESS_DIR_PREFIX + currentPid() + "-";
    long unique = System.nanoTime();
    for (int attempt = 0; ; attempt++) {
      Path dir = base.resolve(prefix + Long.toHexString(unique + attempt));
      try {
        return Files.createDirectory(dir, PosixFilePermissions.asFileAttribute(OWNER_ONLY));
      } catch (java.nio.file.FileAlreadyExistsException taken) {
        if (attempt == 100) {
          throw taken;
        }
      }
    }
  }

  /**
   * This process's id as its PID namespace sees it. Read from {@code /proc/self}: {@code
   * ProcessHandle} would set up its process reaper's thread pool on the way, at every start.
   */
  static String currentPid() {
    try {
      return Files.readSymbolicLink(Paths.get("/proc/self")).toString();
    } catch (IOException | UnsupportedOperationException e) {
      return Long.toString(ProcessHandle.current().pid());
    }
  }

  /**
   * Creates {@code dir/lock} and locks it for the life of this class loader. The file is locked
   * under a temporary name and then renamed, so no other JVM ever sees it unlocked.
   */
  private static void holdLock(Path dir) throws IOException {
    FileChannel[] channel = new FileChannel[1];
    PartialFile.writeThenMove(
        dir.resolve(LOCK_FILE),
        fresh -> {
          channel[0] =
              FileChannel.open(
                  fresh,
                  Set.<OpenOption>of(
                      StandardOpenOption.CREATE_NEW,
                      StandardOpenOption.WRITE,
                      LinkOption.NOFOLLOW_LINKS),
                  PosixFilePermissions.asFileAttribute(
                      PosixFilePermissions.fromString("rw-------")));
          channel[0].lock();
        },
        "rw-------");
    lock = channel[0];
  }

  /**
   * The checked private base directory ({@code -Dnativemem.tmpdir}), for the agent's files that
   * share the library's trust.
   */
  public static synchronized Path privateBase() throws IOException {
    if (privateBase == null) {
      privateBase = privateBaseDirectory();
    }
    return privateBase;
  }

  /**
   * Asks for {@link #jarIdentity} at the load to come (the jar is open then): the agent's kept
   * classes need it, and no one else pays its 2 ms of CPU.
   */
  public static void wantJarIdentity() {
    contentKeyWanted = true;
  }

  /**
   * The jar this class loader loaded the library from, by its content ({@link #contentKey}); null
   * when the library came from elsewhere or {@link #wantJarIdentity} was not called before it.
   */
  public static String jarIdentity() {
    load();
    return jarIdentity;
  }

  /**
   * The user's name, or {@code uid<N>} for a uid the user database does not name (a container's
   * user: the JDK then says "?" for every such uid, whose directories would collide).
   */
  static String userForDirectoryName() {
    String name = System.getProperty("user.name", "?");
    return name.isEmpty() || name.equals("?") || name.contains("/")
        ? "uid" + FileOwnership.processUid()
        : name;
  }

  private static Path privateBaseDirectory() throws IOException {
    String configured = Setting.TMPDIR.value();
    Path base =
        configured != null
            ? Paths.get(configured)
            : Paths.get(
                System.getProperty("java.io.tmpdir"), "nativemem-" + userForDirectoryName());
    String fix = "remove it, or set -D" + TMPDIR_PROPERTY + " to a directory only you can write";
    // Resolved once, here: the real path returned is the one checked, and no other user can
    // re-point any name on it, so the library later loaded by this name is the one written.
    return FileOwnership.ownDirectory(base, OWNER_ONLY, fix);
  }

  /**
   * Each extraction directory is named {@code pid<N>-<random>} and holds a {@code lock} its JVM
   * keeps locked; drop those whose lock is free (their JVM is gone). A directory without a lock is
   * left alone: it is being created, or an older nativemem made it and its owner cannot be told.
   */
  private static void removeDirectoriesOfDeadProcesses(Path base) {
    Set<Path> heldHere = filesOpenInThisProcess();
    try (DirectoryStream<Path> entries =
        Files.newDirectoryStream(base, PROCESS_DIR_PREFIX + "*-*")) {
      for (Path entry : entries) {
        Path lockFile = entry.resolve(LOCK_FILE);
        // Closing any channel on a file drops every lock this process holds on it (POSIX), so a
        // lock held by another class loader of this JVM is recognised by its open descriptor.
        if (heldHere.contains(lockFile) || !FileOwnership.isOwnRegularFile(lockFile)) {
          continue;
        }
        try (FileChannel channel =
                FileChannel.open(lockFile, StandardOpenOption.WRITE, LinkOption.NOFOLLOW_LINKS);
            FileLock free = channel.tryLock()) {
          if (free != null) {
            FileTrees.deleteQuietly(entry);
          }
        } catch (IOException | OverlappingFileLockException e) {
          // Held, or gone meanwhile: either way not ours to remove.
        }
      }
    } catch (IOException | RuntimeException e) {
      // Cleanup is best effort; a failure must never stop the library from loading.
    }
  }

  /** The files this process has open, by the targets of {@code /proc/self/fd}. */
  private static Set<Path> filesOpenInThisProcess() {
    Set<Path> open = new HashSet<>();
    try (DirectoryStream<Path> fds = Files.newDirectoryStream(Paths.get("/proc/self/fd"))) {
      for (Path fd : fds) {
        try {
          open.add(Files.readSymbolicLink(fd));
        } catch (IOException closedMeanwhile) {
          // The descriptor of the listing itself, or one closed since.
        }
      }
    } catch (IOException e) {
      // Without /proc nothing is known to be held here; tryLock still protects other JVMs.
    }
    return open;
  }
}
