package dev.nativemem.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Paths;
import java.util.List;
import org.junit.jupiter.api.Test;

/** What {@code attach} settles before it attaches: help, and the paths it hands to the JVM. */
class AttachCommandTest {
  /**
   * {@code attach <pid> COMMAND --help} prints the command's usage here and runs nothing in the
   * JVM: pid 1 (init, not a JVM) would fail any attach, so a usage with exit 0 means none was
   * tried.
   */
  @Test
  void helpAfterAnAttachedCommandIsPrintedWithoutAttaching() {
    for (String command : AttachCommand.COMMANDS) {
      for (String help : List.of("--help", "-h")) {
        CliRun run = CliRun.of("attach", "1", command, help);
        assertEquals(0, run.exit, command + " " + help + ": " + run);
        assertEquals("", run.err, command + " " + help + ": " + run);
        assertTrue(run.out.contains(" attach [--timeout SECONDS] 1 " + command), run.out);
      }
    }
    CliRun dump = CliRun.of("attach", "1", "dump", "-o", "x.heap", "--help");
    assertTrue(dump.out.contains("1 dump [-o FILE]\nWrites a heap profile of the JVM"), dump.out);
    CliRun stats = CliRun.of("attach", "1", "stats", "--help");
    assertTrue(stats.out.contains("--json"), stats.out);
    assertTrue(stats.out.contains("Through attach it runs inside process 1"), stats.out);
  }

  /** A relative file or directory is taken from the caller's directory, not from the JVM's. */
  @Test
  void relativePathsAreMadeAbsoluteHere() {
    String here = Paths.get("").toAbsolutePath().toString();
    assertEquals(
        List.of("dump", "-o", here + "/rel.heap"),
        AttachCommand.fromHere(List.of("dump", "-o", "rel.heap")));
    assertEquals(
        List.of("watch", "start", "--dir", here + "/vol"),
        AttachCommand.fromHere(List.of("watch", "start", "--dir", "vol")));
    assertEquals(
        List.of("analyze", "--base", "/abs/a.heap", "--top", "5"),
        AttachCommand.fromHere(List.of("analyze", "--base", "/abs/a.heap", "--top", "5")));
    assertEquals(
        List.of("incident", "-o is part of a reason"),
        AttachCommand.fromHere(List.of("incident", "-o is part of a reason")));
  }
}
