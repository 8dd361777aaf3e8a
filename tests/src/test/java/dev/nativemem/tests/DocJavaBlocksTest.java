package dev.nativemem.tests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.tools.JavaCompiler;
import javax.tools.ToolProvider;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The Java blocks of docs/ that tour the API, compiled as written (each the body of a method)
 * against the built jar and run in one JVM under the jar's profiling jemalloc with the agent: a
 * documented path is a temporary one, a name that stands for the user's code a small class.
 */
class DocJavaBlocksTest {
  /** Page, block name, and the lines run after the block with its variables in scope. */
  private static final String[][] BLOCKS = {
    {
      "heap-profiles.md",
      "heap-profiles-tour",
      "System.out.println(\"TOUR \" + Files.size(profile.path()));"
    },
    {
      "heap-profiles.md",
      "heap-profiles-api",
      "System.out.println(\"REPORT \" + report.totalBytes() + \" \" + top.topFlat().size()"
          + " + \" \" + growth.isDifference() + \" \" + Files.size(Path.of(\"/tmp/app.pb.gz\")));"
    },
    {
      "heap-profiles.md",
      "heap-profiles-fleet-api",
      "System.out.println(\"FLEET \" + fleet.processCount() + \" \" + fleet.totalBytes());"
    },
    {
      "memory.md",
      "memory-tour",
      "System.out.println(\"MEMORY \" + a.kind() + \" \" + json.contains(\"_bytes\")"
          + " + \" \" + raw.isEmpty() + \" \" + r);"
    },
    {
      "handles.md",
      "handles-api",
      "System.out.println(\"HANDLES \" + report.toJson().contains(\"nativemem-handle-report/1\")"
          + " + \" \" + buffer.get().getClass().getSimpleName());"
    },
    {
      "watch.md",
      "watch-api",
      "System.out.println(\"WATCH \" + Files.isDirectory(bundle)"
          + " + \" \" + bundle.startsWith(Paths.get(\"/data/incidents\")));"
    },
  };

  /** The user's code the handles tour names: a job that restarts, a buffer that closes. */
  private static final String USER_CODE =
      "  static final class Job {\n"
          + "    void restart() {\n"
          + "      new java.util.zip.Inflater().end();\n"
          + "    }\n"
          + "  }\n\n"
          + "  static final class MyBuffer implements AutoCloseable {\n"
          + "    @Override\n"
          + "    public void close() {}\n"
          + "  }\n\n";

  @TempDir Path tmp;

  @Test
  void tourBlocksCompileAndRun() throws Exception {
    Path fleet = Files.createDirectory(tmp.resolve("dumps"));
    Path incidents = Files.createDirectory(tmp.resolve("incidents"));
    Path profiles = Files.createDirectory(tmp.resolve("profiles"));
    Path src = Files.createDirectory(tmp.resolve("src"));
    Path classes = Files.createDirectory(tmp.resolve("classes"));

    StringBuilder java = new StringBuilder();
    java.append("import dev.nativemem.*;\n")
        .append("import dev.nativemem.base.*;\n")
        .append("import dev.nativemem.handles.*;\n")
        .append("import dev.nativemem.memory.*;\n")
        .append("import dev.nativemem.profile.*;\n")
        .append("import dev.nativemem.watch.*;\n")
        .append("import java.nio.file.*;\n")
        .append("import java.util.*;\n\n")
        .append("public class DocTour {\n")
        .append(USER_CODE)
        // The dumps the report and fleet blocks read: zlib's buffers sampled, an hour apart.
        .append("  static void dumps() throws Exception {\n")
        .append("    NativeMemory.profiling().start();\n")
        .append("    List<java.util.zip.Deflater> held = new ArrayList<>();\n")
        .append("    for (int i = 0; i < 50; i++) held.add(new java.util.zip.Deflater(9));\n")
        .append("    NativeMemory.dumpProfile(Path.of(\"/tmp/app-1h-ago.heap\"));\n")
        .append("    for (int i = 0; i < 150; i++) held.add(new java.util.zip.Deflater(9));\n")
        .append("    NativeMemory.dumpProfile(Path.of(\"/tmp/app.heap\"));\n")
        .append("    NativeMemory.dumpProfile(Path.of(\"/var/dumps/a.heap\"));\n")
        .append("    NativeMemory.dumpProfile(Path.of(\"/var/dumps/b.heap\"));\n")
        .append("    NativeMemory.profiling().stop();\n")
        .append("    System.out.println(\"DUMPS \" + held.size());\n")
        .append("  }\n\n");
    List<String> calls = new ArrayList<>(List.of("dumps"));
    for (String[] block : BLOCKS) {
      String method = block[1].replace('-', '_');
      calls.add(method);
      java.append("  static void ").append(method).append("() throws Exception {\n");
      if (block[1].equals("handles-api")) {
        java.append("    Job job = new Job();\n");
      }
      for (String line : DocBlocks.block(block[0], block[1]).split("\n")) {
        java.append("    ").append(line).append('\n');
      }
      java.append("    ").append(block[2]).append("\n  }\n\n");
    }
    java.append("  public static void main(String[] args) throws Exception {\n");
    for (String call : calls) {
      java.append("    ").append(call).append("();\n");
    }
    java.append("    System.exit(0);\n  }\n}\n");
    String source =
        java.toString()
            .replace("\"/tmp/", "\"" + tmp + "/")
            .replace("\"/var/dumps", "\"" + fleet)
            .replace("\"/data/incidents\"", "\"" + incidents + "\"");
    Files.write(src.resolve("DocTour.java"), source.getBytes(StandardCharsets.UTF_8));

    JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
    ByteArrayOutputStream diagnostics = new ByteArrayOutputStream();
    int compiled =
        javac.run(
            null,
            null,
            diagnostics,
            "-cp",
            ForkedJvm.JAR.toString(),
            "-d",
            classes.toString(),
            src.resolve("DocTour.java").toString());
    assertEquals(0, compiled, diagnostics.toString(StandardCharsets.UTF_8) + "\n" + source);

    ForkedJvm.Result r =
        new ForkedJvm()
            .classPath(classes)
            .env("LD_PRELOAD", ForkedJvm.OWN_JEMALLOC.toString())
            .jvmArg("-javaagent:" + ForkedJvm.JAR + "=level=full")
            .jvmArg("-Dnativemem.profile.dir=" + profiles)
            .main("DocTour");
    assertEquals(0, r.exitCode, r + "\n" + source);

    assertTrue(r.stdout.contains("DUMPS 200"), r.toString());
    assertTrue(value(r, "TOUR (\\d+)") > 0, "the tour's dump has bytes: " + r);
    Matcher report = Pattern.compile("REPORT (\\d+) (\\d+) (\\w+) (\\d+)").matcher(r.stdout);
    assertTrue(report.find(), r.toString());
    assertTrue(Long.parseLong(report.group(1)) > 0, "the dump's total: " + r);
    assertTrue(Long.parseLong(report.group(2)) > 0, "the top sites: " + r);
    assertEquals("true", report.group(3), "diff() against the earlier dump: " + r);
    assertTrue(Long.parseLong(report.group(4)) > 0, "the documented pprof file: " + r);
    Matcher fleetLine = Pattern.compile("FLEET (\\d+) (\\d+)").matcher(r.stdout);
    assertTrue(fleetLine.find(), r.toString());
    assertEquals("2", fleetLine.group(1), "the fleet's two dumps: " + r);
    assertTrue(Long.parseLong(fleetLine.group(2)) > 0, r.toString());
    assertTrue(r.stdout.matches("(?s).*MEMORY JEMALLOC true false .+"), r.toString());
    assertTrue(r.stdout.contains("HANDLES true MyBuffer"), r.toString());
    assertTrue(r.stdout.contains("WATCH true true"), r.toString());
    assertTrue(Files.isRegularFile(tmp.resolve("app.svg")), "the documented flame graph");
    assertTrue(Files.isRegularFile(tmp.resolve("app-top.svg")), "the request's flame graph");
  }

  private static long value(ForkedJvm.Result r, String regex) {
    Matcher m = Pattern.compile(regex).matcher(r.stdout);
    assertTrue(m.find(), regex + ": " + r);
    return Long.parseLong(m.group(1));
  }
}
