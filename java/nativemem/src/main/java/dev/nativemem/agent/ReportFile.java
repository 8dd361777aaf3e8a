package dev.nativemem.agent;

import dev.nativemem.handles.HandleReport;
import dev.nativemem.handles.NativeHandles;
import dev.nativemem.internal.NewFiles;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * The handle report the agent writes at exit, through the one native writer of new files: temp name
 * then rename, 0600, never overwritten, only in a directory no other user can swap (SECURITY.md).
 */
final class ReportFile {
  private ReportFile() {}

  static void writeAtExit(Path requested) {
    try {
      HandleReport report = NativeHandles.report();
      boolean json = requested.getFileName().toString().endsWith(".json");
      Path written = write(requested, json ? report.toJson() + "\n" : report.toString());
      if (!written.equals(requested.toAbsolutePath())) {
        System.err.println(
            "nativemem agent: " + requested + " exists; wrote the handle report to " + written);
      }
    } catch (IOException | RuntimeException e) {
      System.err.println("nativemem agent: cannot write the handle report " + requested + ": " + e);
    }
  }

  /**
   * Writes {@code text} to {@code target}, or to a free sibling name if it exists, by the rules of
   * every file nativemem creates (the native file layer, {@code files}).
   */
  static Path write(Path target, String text) throws IOException {
    Path absolute = target.toAbsolutePath();
    Files.createDirectories(absolute.getParent());
    return NewFiles.writeFreeName(absolute, text.getBytes(StandardCharsets.UTF_8), "report");
  }
}
