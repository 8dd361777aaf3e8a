package dev.nativemem.tests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The watch started from settings: once per JVM, and never in a JVM running nativemem's CLI. */
class WatchStartTest {
  private static final String STARTED = "nativemem memory watch started";

  @TempDir Path work;

  /**
   * The agent's {@code watch=on} beside {@code -Dnativemem.watch=on}: the facade's first use, made
   * inside the agent's start, once started a second watch that raced the first for bundle names.
   */
  @Test
  void agentAndPropertyStartOneWatch() throws Exception {
    Path dir = Files.createDirectory(work.resolve("incidents"));
    ForkedJvm.Result r =
        new ForkedJvm()
            .withTestClasses()
            .jvmArg(
                "-javaagent:" + ForkedJvm.JAR + "=watch=on,watch.dir=" + dir,
                "-Dnativemem.watch=on",
                "-Dnativemem.watch.dir=" + dir)
            .main(WatchThreadsChild.class.getName());
    assertEquals(0, r.exitCode, r.toString());
    assertTrue(r.stdout.contains("WATCHES 1"), r.toString());
    assertEquals(r.stderr.indexOf(STARTED), r.stderr.lastIndexOf(STARTED), "one start logged");
  }

  /**
   * {@code kubectl exec <pod> -- java -jar nativemem.jar attach ...} inherits the container's
   * {@code JAVA_TOOL_OPTIONS}, agent and watch included: the CLI's JVM starts no watch of its own,
   * while an application under the same options does.
   */
  @Test
  void theCliCarriedByTheAgentIsNotWatched() throws Exception {
    Path dir = Files.createDirectory(work.resolve("incidents"));
    String agent = "-javaagent:" + ForkedJvm.JAR + "=watch=on,watch.dir=" + dir;
    ForkedJvm.Result cli = new ForkedJvm().env("JAVA_TOOL_OPTIONS", agent).cli("version");
    assertEquals(0, cli.exitCode, cli.toString());
    assertFalse(cli.stderr.contains(STARTED), cli.toString());
    ForkedJvm.Result app =
        new ForkedJvm()
            .withTestClasses()
            .env("JAVA_TOOL_OPTIONS", agent)
            .main(WatchThreadsChild.class.getName());
    assertEquals(0, app.exitCode, app.toString());
    assertTrue(app.stdout.contains("WATCHES 1"), app.toString());
  }
}
