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

    Path project = Files.createDirectory(tmp.resolve("project"));
    write(project.resolve("pom.xml"), pom(DocBlocks.block("../README.md", "readme-junit-argline")));
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

  /** A user's pom: nativemem-junit and JUnit for tests, Surefire with the documented argLine. */
  private static String pom(String argLine) {
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
        + plugin("maven-surefire-plugin", "3.5.4", argLine)
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

  /** {@code <pkg>/BackendTest.java}: the fragment as written, its {@code { ... }} the body. */
  private static void testClass(Path project, String pkg, String fragment, String body)
      throws IOException {
    assertTrue(fragment.contains("class BackendTest { ... }"), fragment);
    String source =
        "package "
            + pkg
            + ";\n\n"
            + "import dev.nativemem.junit.NativeLeakCheck;\n"
            + "import dev.nativemem.junit.NativeLeakSettings;\n"
            + "import java.util.ArrayList;\n"
            + "import java.util.List;\n"
            + "import java.util.zip.Inflater;\n"
            + "import org.junit.jupiter.api.Test;\n"
            + "import org.junit.jupiter.api.extension.ExtendWith;\n\n"
            + fragment.replace(
                "class BackendTest { ... }",
                "class BackendTest {\n"
                    + "  static final List<Inflater> OPEN = new ArrayList<>();\n\n  "
                    + body
                    + "\n}");
    Path dir = project.resolve("src/test/java/" + pkg);
    Files.createDirectories(dir);
    write(dir.resolve("BackendTest.java"), source);
  }

  /** Surefire's report of {@code <pkg>.BackendTest}. */
  private static String report(Path project, String pkg, String output) throws IOException {
    Path xml = project.resolve("target/surefire-reports/TEST-" + pkg + ".BackendTest.xml");
    assertTrue(Files.isRegularFile(xml), "no report " + xml + ", mvn test printed:\n" + output);
    return DocPages.read(xml);
  }

  private static void assertFailures(Path project, String pkg, int expected, String output)
      throws IOException {
    String xml = report(project, pkg, output);
    int failed = xml.split("<(failure|error)[ >]", -1).length - 1;
    assertEquals(expected, failed, pkg + ".BackendTest's failures:\n" + xml + "\n" + output);
  }

  private static void write(Path file, String text) throws IOException {
    Files.write(file, text.getBytes(StandardCharsets.UTF_8));
  }
}
