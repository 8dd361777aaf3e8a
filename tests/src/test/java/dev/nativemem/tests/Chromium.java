package dev.nativemem.tests;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/** Headless Chromium, to draw what we write for browsers (the incident page, flame graphs). */
final class Chromium {
  static final Path PATH = Paths.get("/usr/bin/chromium");

  /** Why a test that needs it is skipped. */
  static final String MISSING =
      "Chromium is not installed (Debian package chromium; test.sh installs it)";

  private Chromium() {}

  static boolean installed() {
    return Files.isExecutable(PATH);
  }

  /**
   * Runs headless Chromium once with its profile in {@code profile} and its output files in {@code
   * work}; returns its standard output.
   */
  static String run(Path work, Path profile, String... args) throws Exception {
    List<String> command = new ArrayList<>();
    command.add(PATH.toString());
    command.add("--headless");
    command.add("--no-sandbox"); // the sandbox refuses to run as root, as CI does
    command.add("--disable-gpu");
    command.add("--hide-scrollbars");
    command.add("--user-data-dir=" + profile);
    command.addAll(List.of(args));
    Path out = Files.createTempFile(work, "chromium", ".out");
    Path err = Files.createTempFile(work, "chromium", ".err");
    Process p =
        new ProcessBuilder(command)
            .redirectOutput(out.toFile())
            .redirectError(err.toFile())
            .start();
    if (!p.waitFor(120, TimeUnit.SECONDS)) {
      p.destroyForcibly();
      throw new AssertionError("chromium did not finish: " + command);
    }
    String stdout = Files.readString(out);
    String stderr = Files.readString(err);
    Files.delete(out);
    Files.delete(err);
    assertEquals(0, p.exitValue(), command + "\n" + stderr);
    return stdout;
  }
}
