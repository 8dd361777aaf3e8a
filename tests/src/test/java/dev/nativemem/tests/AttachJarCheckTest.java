package dev.nativemem.tests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Enumeration;
import java.util.List;
import java.util.zip.ZipEntry;
import java.util.zip.ZipFile;
import java.util.zip.ZipOutputStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The agent jar a target loads is checked by the target: the load request carries the SHA-256 of
 * the bytes the attaching side handed over, and the agent runs nothing from a jar that hashes
 * otherwise (one swapped after it was placed, here by the client itself between the placing and the
 * load: the other user's move).
 */
class AttachJarCheckTest {
  @TempDir Path tmp;

  @Test
  void aJarSwappedAfterItWasPlacedIsRefusedByTheTarget() throws Exception {
    Path jar = tmp.resolve("nativemem.jar");
    Files.copy(ForkedJvm.JAR, jar);
    // The same agent with one entry more: it would load and run, but its bytes differ.
    Path other = tmp.resolve("other.jar");
    withExtraEntry(jar, other);
    try (AttachTargetProcess target = new AttachTargetProcess(List.of(ForkedJvm.TEST_CLASSES))) {
      ForkedJvm.Result swapped = half(target, jar, other);
      String id = swapped.stdout.trim().split(" ")[0];
      String refusal = "";
      for (int i = 0; i < 100 && !refusal.contains("refused an attach command"); i++) {
        Thread.sleep(100);
        refusal = target.stderr();
      }
      assertTrue(
          refusal.contains("does not hold the bytes the attaching side sent"),
          "the target's standard error: " + refusal);
      assertNull(
          AttachFromJreTest.systemProperty(target.pid, "nativemem.attach.result." + id),
          "the swapped jar ran the command");

      // The jar as placed (put back): the same request runs.
      Files.copy(ForkedJvm.JAR, jar, java.nio.file.StandardCopyOption.REPLACE_EXISTING);
      ForkedJvm.Result kept = half(target, jar, null);
      String keptId = kept.stdout.trim().split(" ")[0];
      assertNotNull(
          AttachFromJreTest.systemProperty(target.pid, "nativemem.attach.result." + keptId),
          "the unchanged jar should leave its result: " + kept + target.stderr());
    }
  }

  /** Loads {@code stats} into the target with {@code jar}, swapped for {@code swap} if given. */
  private static ForkedJvm.Result half(AttachTargetProcess target, Path jar, Path swap)
      throws Exception {
    ForkedJvm client = new ForkedJvm().withTestClasses().jvmArg("-Dnativemem.jar=" + jar);
    if (swap != null) {
      client.jvmArg("-Dnativemem.swap.with=" + swap);
    }
    ForkedJvm.Result r =
        client.main(AttachHalfway.class.getName(), Long.toString(target.pid), "stats", "--json");
    assertEquals(0, r.exitCode, r.toString());
    return r;
  }

  private static void withExtraEntry(Path jar, Path to) throws IOException {
    try (ZipFile in = new ZipFile(jar.toFile());
        OutputStream file = Files.newOutputStream(to);
        ZipOutputStream out = new ZipOutputStream(file)) {
      for (Enumeration<? extends ZipEntry> e = in.entries(); e.hasMoreElements(); ) {
        ZipEntry entry = e.nextElement();
        out.putNextEntry(new ZipEntry(entry.getName()));
        try (InputStream bytes = in.getInputStream(entry)) {
          bytes.transferTo(out);
        }
        out.closeEntry();
      }
      out.putNextEntry(new ZipEntry("planted.txt"));
      out.write("another user's".getBytes(StandardCharsets.UTF_8));
      out.closeEntry();
    }
  }
}
