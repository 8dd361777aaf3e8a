package dev.nativemem.tests;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.zip.Inflater;

/**
 * A JVM for {@code nativemem attach} to look into; it needs only the JDK. Reads commands from
 * stdin: {@code open N} keeps N new Inflaters open and prints the line that made them, {@code self
 * ARGS} runs the nativemem CLI in-process (when nativemem is on its class path), {@code exit} ends
 * it.
 */
public final class AttachTarget {
  private static final List<Object> KEPT = new ArrayList<>();

  private AttachTarget() {}

  /** An Inflater, and a throwable made on the same line: it tells the line. */
  private static Object[] openOne() {
    return new Object[] {new Inflater(), new Throwable()};
  }

  /**
   * Ends this JVM abruptly as soon as an attached command that tracks handles starts (nativemem
   * appears on the bootstrap class path), so the attaching side sees the target die during it.
   */
  private static void haltWhenAttached() {
    Thread watcher =
        new Thread(
            () -> {
              while (true) {
                try {
                  Class.forName("dev.nativemem.attach.AttachedCommand", false, null);
                  Runtime.getRuntime().halt(3);
                } catch (ClassNotFoundException notYet) {
                  Thread.onSpinWait();
                }
              }
            });
    watcher.setDaemon(true);
    watcher.start();
  }

  public static void main(String[] args) throws Exception {
    System.out.println("READY " + ProcessHandle.current().pid());
    BufferedReader in =
        new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    for (String line = in.readLine(); line != null; line = in.readLine()) {
      if (line.startsWith("open ")) {
        int n = Integer.parseInt(line.substring(5));
        int at = 0;
        for (int i = 0; i < n; i++) {
          Object[] opened = openOne();
          KEPT.add(opened[0]);
          at = ((Throwable) opened[1]).getStackTrace()[0].getLineNumber();
        }
        System.out.println("OPENED " + n + " AT " + at);
      } else if (line.startsWith("self ")) {
        Class.forName("dev.nativemem.cli.NativeMemoryCli")
            .getMethod("run", String[].class)
            .invoke(null, (Object) line.substring(5).split(" "));
        System.out.println("SELF DONE");
      } else if (line.equals("exit")) {
        return;
      } else if (line.equals("halt when attached")) {
        haltWhenAttached();
        System.out.println("ARMED");
      }
    }
  }
}
