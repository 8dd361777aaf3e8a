package dev.nativemem.attach;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;

/** Another process's {@code /proc/<pid>/<name>}, read bounded; empty when unreadable. */
final class ProcText {
  /** The most read of one file. */
  private static final int MAX_BYTES = 1 << 20;

  private ProcText() {}

  static String read(int pid, String name) {
    try (InputStream in = Files.newInputStream(Paths.get("/proc", Integer.toString(pid), name))) {
      return new String(in.readNBytes(MAX_BYTES), StandardCharsets.UTF_8);
    } catch (IOException | SecurityException e) {
      return "";
    }
  }
}
