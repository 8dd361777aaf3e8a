package dev.nativemem.tests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardCopyOption;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The JUnit set-up of the README and docs/junit.md, run as a user's build runs it: a generated
 * Maven project whose pom carries the README's {@code argLine} as written and whose tests are the
 * documented test-class fragments, their {@code { ... }} filled with a test that keeps an Inflater
 * open or one that ends it; {@code mvn -o -q test} in a local repository of its own, where the
 * built jars are installed and everything else is copied from the build's local repository.
 */
class DocJunitFragmentsTest {
  private static final String VERSION = "0.1.0";
  private static final Path ROOT = DocBlocks.DOCS.getParent();

  @TempDir Path tmp;

  @Test
  void documentedSetUpFailsTheLeakingTestsOnly() throws Exception {
    Path project = Files.createDirectory(tmp.resolve("project"));
    write(
        project.resolve("pom.xml"),
        pom(
            plugin(
                "maven-surefire-plugin",
                "3.5.4",
                DocBlocks.block("../README.md", "readme-junit-argline"))));
    String readmeClass = DocBlocks.block("../README.md", "readme-junit-class");
    String settingsClass = DocBlocks.block("junit.md", "junit-settings-class");
    testClass(project, "leaks", readmeClass, "@Test void restores() { OPEN.add(new Inflater()); }");
    testClass(project, "clean", readmeClass, "@Test void restores() { new Inflater().end(); }");
    testClass(
        project,
        "permethod",
        settingsClass,
        "@Test void leaks() { OPEN.add(new Inflater()); }\n"
            + "  @Test void closes() { new Inflater().end(); }");
    String output = mvnTest(project);

    String leaks = report(project, "leaks", output);
    assertTrue(
        leaks.contains("native handles leaked in 'leaks.BackendTest': 0 leaked"),
        "the README's class fails with the extension's message:\n" + leaks + "\n" + output);
    assertTrue(
        leaks.contains(
            "1 open (never closed) Inflater, created at leaks.BackendTest.restores(BackendTest.java:"),
        leaks);
    assertFailures(project, "clean", 0, output);
    String perMethod = report(project, "permethod", output);
    assertTrue(
        perMethod.contains("native handles leaked in 'permethod.BackendTest#leaks()'"),
        "docs/junit.md's perMethod = true names the leaking method:\n" + perMethod);
    assertFalse(perMethod.contains("#closes()"), perMethod);
    assertFailures(project, "permethod", 1, output);
  }

  /**
   * docs/junit.md's Maven set-up for leaked bytes (the allocator extracted by {@code env} and
   * preloaded by Surefire, the agent on the {@code argLine}) in a user's project: the README's
   * class keeping 2,000 used Deflaters fails naming its line, zlib's allocation and the bytes
   * within sampling error (15%, five standard errors) of what jemalloc's per-thread counters say
   * the loop kept; one keeping a 32 MiB direct buffer fails too; the same buffer in the class of
   * docs/junit.md that allows 64 MiB passes, and so does the class that ends its Deflaters while
   * the JVM links lambdas and loads classes.
   */
  @Test
  void documentedSetUpFailsTheClassThatLeftNativeBytesLive() throws Exception {
    Path project = Files.createDirectory(tmp.resolve("project"));
    write(
        project.resolve("pom.xml"),
        pom(versioned(DocBlocks.block("junit.md", "junit-bytes-plugins"))));
    String readmeClass = DocBlocks.block("../README.md", "readme-junit-class");
    String limitClass = DocBlocks.block("junit.md", "junit-bytes-settings");
    String deflaters =
        "for (int i = 0; i < 2000; i++) {\n"
            + "      Object[] made = {new Deflater(), new Throwable()};\n"
            + "      line = ((Throwable) made[1]).getStackTrace()[0].getLineNumber();\n"
            + "      Deflater d = (Deflater) made[0];\n"
            + "      d.setInput(new byte[64]);\n"
            + "      d.finish();\n"
            + "      d.deflate(new byte[128]);\n"
            + "      %s\n"
            + "    }\n";
    testClass(
        project,
        "deflaters",
        readmeClass,
        "@Test void compresses() throws Exception {\n"
            + "    new Deflater().end();\n"
            + "    long before = threadLiveBytes();\n"
            + "    int line = 0;\n"
            + "    "
            + String.format(deflaters, "OPEN.add(d);")
            + "    long kept = threadLiveBytes() - before;\n"
            + "    Files.write(Paths.get(\"target\", \"kept.txt\"), (line + \" \" + kept).getBytes());\n"
            + "  }\n"
            + "  static long threadLiveBytes() {\n"
            + "    return NativeMemory.mallctl(\"thread.allocated\")"
            + " - NativeMemory.mallctl(\"thread.deallocated\");\n"
            + "  }");
    testClass(
        project,
        "ended",
        readmeClass,
        "@Test void compresses() throws Exception {\n"
            + "    int line = 0;\n"
            + "    "
            + String.format(deflaters, "d.end();")
            + "    Supplier<String> s = () -> \"linked\";\n"
            + "    OPEN.add(s);\n"
            + "    OPEN.add(Class.forName(\"java.util.concurrent.ConcurrentSkipListMap\"));\n"
            + "  }");
    String buffer =
        "@Test void caches() {\n" + "    OPEN.add(ByteBuffer.allocateDirect(32 << 20));\n" + "  }";
    testClass(project, "buffer", readmeClass, buffer);
    testClass(project, "allowed", limitClass, buffer);
    String output = mvnTest(project);

    String leaks = report(project, "deflaters", "BackendTest", output);
    String[] kept = DocPages.read(project.resolve("target/kept.txt")).split(" ");
    String site = "deflaters.BackendTest.compresses(BackendTest.java:" + kept[0] + ")";
    Matcher bytes =
        Pattern.compile("\\((\\d+) bytes\\) allocated at " + Pattern.quote(site)).matcher(leaks);
    assertTrue(
        bytes.find() && leaks.contains("native memory left live by 'deflaters.BackendTest': "),
        "the class fails naming " + site + " and the bytes:\n" + leaks + "\n" + output);
    assertTrue(leaks.indexOf("at deflateInit2_", bytes.end()) > 0, leaks);
    long reported = Long.parseLong(bytes.group(1));
    long truth = Long.parseLong(kept[1].trim());
    System.out.println("leaked bytes: reported " + reported + " at " + site + ", kept " + truth);
    // One sample per 512 KiB over 8,000 zlib buffers of 64 KiB: 3.1% relative error; five of those.
    assertEquals(1.0, (double) reported / truth, 0.15, "reported " + reported + ", kept " + truth);

    assertFailures(project, "ended", 0, output);
    String directBuffer = report(project, "buffer", "BackendTest", output);
    assertTrue(
        directBuffer.contains("allocated at buffer.BackendTest.caches(BackendTest.java:"),
        "a direct buffer is the application's:\n" + directBuffer);
    assertFailures(project, "allowed", "CacheTest", 0, output);
  }

  /** The plugins as docs/junit.md writes them, with the versions a build pins elsewhere. */
  private static String versioned(String plugins) {
    return plugins
        .replace(
            "<artifactId>maven-dependency-plugin</artifactId>",
            "<artifactId>maven-dependency-plugin</artifactId><version>3.8.1</version>")
        .replace(
            "<artifactId>exec-maven-plugin</artifactId>",
            "<artifactId>exec-maven-plugin</artifactId><version>3.6.2</version>")
        .replace(
            "<artifactId>maven-surefire-plugin</artifactId>",
            "<artifactId>maven-surefire-plugin</artifactId><version>3.5.4</version>");
  }

  /**
   * {@code mvn -o -q test} in {@code project}, with a local repository of its own where the built
   * jars are installed and everything else comes from the build's; returns what it printed.
   */
  private String mvnTest(Path project) throws Exception {
    assumeTrue(ForkedJvm.onPath("mvn"), "mvn is not on PATH");
    Path built = Paths.get(System.getProperty("nativemem.test.m2", ""));
    assumeTrue(
        Files.isDirectory(built.resolve("org/apache/maven/plugins/maven-surefire-plugin")),
        "the build's local repository (nativemem.test.m2) is not set: " + built);
    Path repo = Files.createDirectory(tmp.resolve("m2"));
    install(repo, "nativemem-parent", ROOT.resolve("pom.xml"), null);
    install(repo, "nativemem", ROOT.resolve("java/nativemem/pom.xml"), ForkedJvm.BUILT_JAR);
    Path junit = ROOT.resolve("java/nativemem-junit/target/nativemem-junit-" + VERSION + ".jar");
    assertTrue(Files.isRegularFile(junit), "build java/nativemem-junit first: " + junit);
    install(repo, "nativemem-junit", ROOT.resolve("java/nativemem-junit/pom.xml"), junit);
    Path settings = tmp.resolve("settings.xml");
    write(
        settings,
        "<settings><mirrors><mirror><id>build</id><mirrorOf>*</mirrorOf><url>"
            + built.toUri()
            + "</url></mirror></mirrors></settings>\n");

    Path out = tmp.resolve("mvn.out");
    ProcessBuilder mvn =
        new ProcessBuilder(
                "mvn",
                "-B",
                "-o",
                "-q",
                "-s",
                settings.toString(),
                "-Dmaven.repo.local=" + repo,
                // Offline, yet the build's own repository (a file: URL) serves the plugins.
                "-Daether.offline.protocols=file",
                "test")
            .directory(project.toFile())
            .redirectErrorStream(true)
            .redirectOutput(out.toFile());
    mvn.environment().remove("JAVA_TOOL_OPTIONS");
    mvn.environment().remove("MAVEN_OPTS");
    mvn.environment().put("JAVA_HOME", System.getProperty("java.home"));
    Process process = mvn.start();
    if (!process.waitFor(300, TimeUnit.SECONDS)) {
      process.destroyForcibly();
      throw new IllegalStateException("mvn test did not end in 300 s: " + DocPages.read(out));
    }
    String output = DocPages.read(out);
    assertNotEquals(0, process.exitValue(), "a leaking test fails the build:\n" + output);
    return output;
  }

  /** Installs {@code jar} (or none: a parent pom) and its pom as {@code mvn install} lays them. */
  private static void install(Path repo, String artifact, Path pom, Path jar) throws IOException {
    Path dir = repo.resolve("dev/nativemem/" + artifact + "/" + VERSION);
    Files.createDirectories(dir);
    String name = artifact + "-" + VERSION;
    Files.copy(pom, dir.resolve(name + ".pom"), StandardCopyOption.COPY_ATTRIBUTES);
    if (jar != null) {
      Files.copy(jar, dir.resolve(name + ".jar"), StandardCopyOption.COPY_ATTRIBUTES);
    }
  }

  /** A user's pom: nativemem-junit and JUnit for tests, and {@code plugins}. */
  private static String pom(String plugins) {
    return "<project xmlns=\"http://maven.apache.org/POM/4.0.0\">\n"
        + "  <modelVersion>4.0.0</modelVersion>\n"
        + "  <groupId>com.example</groupId>\n"
        + "  <artifactId>backend</artifactId>\n"
        + "  <version>1.0</version>\n"
        + "  <properties>\n"
        + "    <maven.compiler.release>11</maven.compiler.release>\n"
        + "    <project.build.sourceEncoding>UTF-8</project.build.sourceEncoding>\n"
        + "  </properties>\n"
        + "  <dependencies>\n"
        + "    <dependency>\n"
        + "      <groupId>dev.nativemem</groupId>\n"
        + "      <artifactId>nativemem-junit</artifactId>\n"
        + "      <version>"
        + VERSION
        + "</version>\n"
        + "      <scope>test</scope>\n"
        + "    </dependency>\n"
        + "    <dependency>\n"
        + "      <groupId>org.junit.jupiter</groupId>\n"
        + "      <artifactId>junit-jupiter</artifactId>\n"
        + "      <version>"
        + System.getProperty("nativemem.test.junit", "5.14.1")
        + "</version>\n"
        + "      <scope>test</scope>\n"
        + "    </dependency>\n"
        + "  </dependencies>\n"
        + "  <build>\n"
        + "    <plugins>\n"
        + plugin("maven-resources-plugin", "3.3.1", "")
        + plugin("maven-compiler-plugin", "3.14.0", "")
        + plugins
        + "    </plugins>\n"
        + "  </build>\n"
        + "</project>\n";
  }

  private static String plugin(String artifact, String version, String configuration) {
    return "      <plugin>\n"
        + "        <groupId>org.apache.maven.plugins</groupId>\n"
        + "        <artifactId>"
        + artifact
        + "</artifactId>\n"
        + "        <version>"
        + version
        + "</version>\n"
        + "        <configuration>\n"
        + configuration
        + "        </configuration>\n"
        + "      </plugin>\n";
  }

  /** {@code <pkg>/<Class>.java}: the fragment as written, its {@code { ... }} the body. */
  private static void testClass(Path project, String pkg, String fragment, String body)
      throws IOException {
    Matcher declared = Pattern.compile("class (\\w+) \\{ \\.\\.\\. \\}").matcher(fragment);
    assertTrue(declared.find(), fragment);
    String name = declared.group(1);
    String source =
        "package "
            + pkg
            + ";\n\n"
            + "import dev.nativemem.NativeMemory;\n"
            + "import dev.nativemem.junit.NativeLeakCheck;\n"
            + "import dev.nativemem.junit.NativeLeakSettings;\n"
            + "import java.nio.ByteBuffer;\n"
            + "import java.nio.file.Files;\n"
            + "import java.nio.file.Paths;\n"
            + "import java.util.ArrayList;\n"
            + "import java.util.List;\n"
            + "import java.util.function.Supplier;\n"
            + "import java.util.zip.Deflater;\n"
            + "import java.util.zip.Inflater;\n"
            + "import org.junit.jupiter.api.Test;\n"
            + "import org.junit.jupiter.api.extension.ExtendWith;\n\n"
            + fragment.replace(
                declared.group(),
                "class "
                    + name
                    + " {\n"
                    + "  static final List<Object> OPEN = new ArrayList<>();\n\n  "
                    + body
                    + "\n}");
    Path dir = project.resolve("src/test/java/" + pkg);
    Files.createDirectories(dir);
    write(dir.resolve(name + ".java"), source);
  }

  /** Surefire's report of {@code <pkg>.BackendTest}. */
  private static String report(Path project, String pkg, String output) throws IOException {
    return report(project, pkg, "BackendTest", output);
  }

  /** Surefire's report of {@code <pkg>.<name>}. */
  private static String report(Path project, String pkg, String name, String output)
      throws IOException {
    Path xml = project.resolve("target/surefire-reports/TEST-" + pkg + "." + name + ".xml");
    assertTrue(Files.isRegularFile(xml), "no report " + xml + ", mvn test printed:\n" + output);
    return DocPages.read(xml);
  }

  private static void assertFailures(Path project, String pkg, int expected, String output)
      throws IOException {
    assertFailures(project, pkg, "BackendTest", expected, output);
  }

  private static void assertFailures(
      Path project, String pkg, String name, int expected, String output) throws IOException {
    String xml = report(project, pkg, name, output);
    int failed = xml.split("<(failure|error)[ >]", -1).length - 1;
    assertEquals(expected, failed, pkg + "." + name + "'s failures:\n" + xml + "\n" + output);
  }

  private static void write(Path file, String text) throws IOException {
    Files.write(file, text.getBytes(StandardCharsets.UTF_8));
  }
}
