package dev.nativemem.agent;

import dev.nativemem.HandleReport;
import dev.nativemem.NativeHandles;
import dev.nativemem.internal.FileOwnership;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;

/**
 * The handle report the agent writes at exit: temp name then link, 0600, never overwritten, only in
 * a directory no other user can swap files in (SECURITY.md).
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

  /** Writes {@code text} to {@code target}, or to a free sibling name if it exists. */
  static Path write(Path target, String text) throws IOException {
    Path absolute = target.toAbsolutePath();
    Path dir = absolute.getParent();
    Files.createDirectories(dir);
    // Elsewhere another user could swap the temp file below for a link between write and link.
    FileOwnership.requireNoOtherWriterAbove(
        dir, "write the report into a directory only you can write, or a sticky one such as /tmp");
    Path temp =
        Files.createTempFile(
            dir,
            ".nativemem-report",
            ".partial",
            PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
    try {
      Files.write(temp, text.getBytes(StandardCharsets.UTF_8));
      String name = absolute.getFileName().toString();
      int dot = name.lastIndexOf('.');
      String stem = dot > 0 ? name.substring(0, dot) : name;
      String extension = dot > 0 ? name.substring(dot) : "";
      long pid = ProcessHandle.current().pid();
      for (int attempt = 0; attempt < 100; attempt++) {
        Path candidate =
            attempt == 0
                ? absolute
                : dir.resolve(stem + "-" + pid + (attempt == 1 ? "" : "-" + attempt) + extension);
        try {
          // A hard link fails if the name exists: the atomic "create, never replace".
          Files.createLink(candidate, temp);
          return candidate;
        } catch (FileAlreadyExistsException taken) {
          // try the next name
        } catch (UnsupportedOperationException noLinks) {
          if (!Files.exists(candidate)) {
            Files.move(temp, candidate, StandardCopyOption.ATOMIC_MOVE);
            return candidate;
          }
        }
      }
      throw new IOException("no free name next to " + absolute);
    } finally {
      Files.deleteIfExists(temp);
    }
  }
}
