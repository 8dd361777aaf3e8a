import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintWriter;
import java.lang.module.ModuleDescriptor;
import java.lang.module.ModuleFinder;
import java.lang.module.ModuleReference;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Enumeration;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.jar.JarEntry;
import java.util.jar.JarFile;
import java.util.spi.ToolProvider;

/**
 * The public API of a published jar as text: every public type of its API packages with its
 * public and protected members and their signatures (javap's), types and members sorted so the
 * listing changes only when the API does.
 *
 * <p>API packages: those the jar's module descriptor exports, or, for a jar without one, every
 * package but {@code internal} and {@code shaded} ones.
 *
 * <pre>
 * java build/ApiListing.java JAR          # prints the listing
 * java build/ApiListing.java --write      # rewrites api/*.txt from the jars the build left
 * </pre>
 *
 * The committed listings are api/MODULE.txt; ApiListingTest (tests module) fails when a jar's
 * listing differs from its file.
 */
public final class ApiListing {
  /** The published modules: api/NAME.txt lists java/NAME/target/NAME-VERSION.jar. */
  static final List<String> MODULES =
      List.of("nativemem", "nativemem-junit", "nativemem-micrometer", "nativemem-flink");

  private static final int CLASS_PUBLIC = 0x0001;

  public static void main(String[] args) throws Exception {
    if (args.length == 2 && args[0].equals("--write")) {
      write(Paths.get("."), args[1]);
    } else if (args.length == 1 && !args[0].startsWith("-")) {
      System.out.print(listing(Paths.get(args[0])));
    } else {
      System.err.println(
          "usage: java build/ApiListing.java JAR | --write VERSION (from the checkout's root)");
      System.exit(2);
    }
  }

  /** Rewrites api/MODULE.txt for every published module from its built jar. */
  static void write(Path root, String version) throws IOException {
    for (String module : MODULES) {
      Path jar = root.resolve("java/" + module + "/target/" + module + "-" + version + ".jar");
      Path out = root.resolve("api/" + module + ".txt");
      Files.createDirectories(out.getParent());
      Files.writeString(out, listing(jar));
      System.out.println("wrote " + out + " from " + jar);
    }
  }

  /** The listing of {@code jar}. */
  static String listing(Path jar) throws IOException {
    Set<String> packages = apiPackages(jar);
    List<String> types = new ArrayList<>();
    try (JarFile file = new JarFile(jar.toFile())) {
      Enumeration<JarEntry> entries = file.entries();
      while (entries.hasMoreElements()) {
        JarEntry entry = entries.nextElement();
        String name = entry.getName();
        if (!name.endsWith(".class") || name.endsWith("module-info.class")) {
          continue;
        }
        if (name.startsWith("META-INF/")) {
          continue;
        }
        String type = name.substring(0, name.length() - ".class".length()).replace('/', '.');
        int dot = type.lastIndexOf('.');
        String pkg = dot < 0 ? "" : type.substring(0, dot);
        if (!packages.contains(pkg) || !isPublic(file, entry, type)) {
          continue;
        }
        types.add(type);
      }
    }
    TreeMap<String, String> blocks = new TreeMap<>();
    for (String type : types) {
      String block = javap(jar, type);
      if (!block.isEmpty()) {
        blocks.put(type, block);
      }
    }
    StringBuilder out = new StringBuilder();
    out.append("# The public API of ")
        .append(jar.getFileName().toString().replaceAll("-[0-9][^-]*\\.jar$", ""))
        .append(" (packages: ")
        .append(String.join(", ", packages))
        .append(")\n")
        .append("# Regenerate after a deliberate change: mvn -B -q install -DskipTests,")
        .append(" then java build/ApiListing.java --write VERSION\n");
    for (String block : blocks.values()) {
      out.append('\n').append(block);
    }
    return out.toString();
  }

  /** Exported packages of the module descriptor; without one, all but internal and shaded ones. */
  static Set<String> apiPackages(Path jar) throws IOException {
    Set<String> packages = new TreeSet<>();
    Optional<ModuleReference> module =
        ModuleFinder.of(jar).findAll().stream().findFirst();
    boolean explicit =
        module.isPresent() && !module.get().descriptor().isAutomatic();
    if (explicit) {
      for (ModuleDescriptor.Exports exports : module.get().descriptor().exports()) {
        if (!exports.isQualified()) {
          packages.add(exports.source());
        }
      }
      return packages;
    }
    try (JarFile file = new JarFile(jar.toFile())) {
      Enumeration<JarEntry> entries = file.entries();
      while (entries.hasMoreElements()) {
        String name = entries.nextElement().getName();
        int slash = name.lastIndexOf('/');
        if (!name.endsWith(".class") || slash < 0 || name.startsWith("META-INF/")) {
          continue;
        }
        String pkg = name.substring(0, slash).replace('/', '.');
        if (!pkg.contains(".internal") && !pkg.contains(".shaded")) {
          packages.add(pkg);
        }
      }
    }
    return packages;
  }

  /**
   * Whether the class is public: its access flags say so, and for a nested class its
   * InnerClasses entry (the outer class is listed on its own and must be public too).
   */
  private static boolean isPublic(JarFile file, JarEntry entry, String type) throws IOException {
    byte[] code;
    try (InputStream in = file.getInputStream(entry)) {
      code = in.readAllBytes();
    }
    ClassAccess access = ClassAccess.read(code);
    if ((access.flags & CLASS_PUBLIC) == 0) {
      return false;
    }
    String binary = type.replace('.', '/');
    Integer nested = access.innerFlags.get(binary);
    if (nested != null && (nested & CLASS_PUBLIC) == 0) {
      return false;
    }
    int dollar = type.lastIndexOf('$');
    if (dollar > 0) {
      JarEntry outer = file.getJarEntry(type.substring(0, dollar).replace('.', '/') + ".class");
      return outer != null && isPublic(file, outer, type.substring(0, dollar));
    }
    return true;
  }

  /** javap's public and protected members of one type, members sorted, no source line. */
  private static String javap(Path jar, String type) {
    ToolProvider javap =
        ToolProvider.findFirst("javap")
            .orElseThrow(() -> new IllegalStateException("javap not found: run with a JDK"));
    ByteArrayOutputStream text = new ByteArrayOutputStream();
    ByteArrayOutputStream errors = new ByteArrayOutputStream();
    int code =
        javap.run(
            new PrintWriter(text, true, StandardCharsets.UTF_8),
            new PrintWriter(errors, true, StandardCharsets.UTF_8),
            "-protected",
            "-classpath",
            jar.toString(),
            type);
    if (code != 0) {
      throw new IllegalStateException(
          "javap " + type + " failed: " + errors.toString(StandardCharsets.UTF_8));
    }
    List<String> lines = new ArrayList<>();
    for (String line : text.toString(StandardCharsets.UTF_8).split("\n")) {
      if (!line.startsWith("Compiled from ") && !line.isBlank()) {
        lines.add(line);
      }
    }
    if (lines.size() < 2) {
      return "";
    }
    String head = lines.get(0);
    TreeSet<String> members = new TreeSet<>(lines.subList(1, lines.size() - 1));
    StringBuilder out = new StringBuilder(head).append('\n');
    for (String member : members) {
      out.append(member).append('\n');
    }
    return out.append(lines.get(lines.size() - 1)).append('\n').toString();
  }

  /** The access flags of a class file and of the classes its InnerClasses attribute names. */
  private static final class ClassAccess {
    int flags;
    final TreeMap<String, Integer> innerFlags = new TreeMap<>();

    static ClassAccess read(byte[] code) {
      java.nio.ByteBuffer in = java.nio.ByteBuffer.wrap(code);
      in.getInt(); // magic
      in.getShort(); // minor
      in.getShort(); // major
      int count = in.getShort() & 0xffff;
      String[] utf8 = new String[count];
      int[] classNames = new int[count];
      for (int i = 1; i < count; i++) {
        int tag = in.get() & 0xff;
        switch (tag) {
          case 1:
            byte[] bytes = new byte[in.getShort() & 0xffff];
            in.get(bytes);
            utf8[i] = new String(bytes, StandardCharsets.UTF_8);
            break;
          case 7:
            classNames[i] = in.getShort() & 0xffff;
            break;
          case 8:
          case 16:
          case 19:
          case 20:
            in.getShort();
            break;
          case 15:
            in.get();
            in.getShort();
            break;
          case 3:
          case 4:
          case 9:
          case 10:
          case 11:
          case 12:
          case 17:
          case 18:
            in.getInt();
            break;
          case 5:
          case 6:
            in.getLong();
            i++;
            break;
          default:
            throw new IllegalStateException("constant pool tag " + tag);
        }
      }
      ClassAccess access = new ClassAccess();
      access.flags = in.getShort() & 0xffff;
      in.getShort(); // this
      in.getShort(); // super
      int interfaces = in.getShort() & 0xffff;
      for (int i = 0; i < interfaces; i++) {
        in.getShort();
      }
      for (int member = 0; member < 2; member++) { // fields, then methods
        int n = in.getShort() & 0xffff;
        for (int i = 0; i < n; i++) {
          in.getShort();
          in.getShort();
          in.getShort();
          skipAttributes(in);
        }
      }
      int attributes = in.getShort() & 0xffff;
      for (int i = 0; i < attributes; i++) {
        String name = utf8[in.getShort() & 0xffff];
        int length = in.getInt();
        if (!"InnerClasses".equals(name)) {
          in.position(in.position() + length);
          continue;
        }
        int classes = in.getShort() & 0xffff;
        for (int c = 0; c < classes; c++) {
          int inner = in.getShort() & 0xffff;
          in.getShort(); // outer
          in.getShort(); // simple name
          int flags = in.getShort() & 0xffff;
          access.innerFlags.put(utf8[classNames[inner]], flags);
        }
      }
      return access;
    }

    private static void skipAttributes(java.nio.ByteBuffer in) {
      int n = in.getShort() & 0xffff;
      for (int i = 0; i < n; i++) {
        in.getShort();
        int length = in.getInt();
        in.position(in.position() + length);
      }
    }
  }
}
