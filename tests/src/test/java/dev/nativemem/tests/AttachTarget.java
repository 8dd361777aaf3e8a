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
 * ARGS} runs the nativemem CLI in-process (when nativemem is on its class path), {@code open in
 * hostile thread N} opens N from a thread whose name carries terminal escapes, {@code end} ends
 * every Inflater kept, {@code exit} ends it.
 */
public final class AttachTarget {
  private static final List<Object> KEPT = new ArrayList<>();

  /** A thread name that retitles a terminal (OSC 0 ... BEL) if printed raw. */
  static final String HOSTILE_THREAD_NAME = "\u001b]0;pwned\u0007";

  private AttachTarget() {}

  /** An Inflater, and a throwable made on the same line: it tells the line. */
  private static Object[] openOne() {
    return new Object[] {new Inflater(), new Throwable()};
  }

  /**
   * Ends this JVM abruptly as soon as an attached command that tracks handles starts (its one
   * bootstrap-loader class appears), so the attaching side sees the target die during it.
   */
  private static void haltWhenAttached() {
    Thread watcher =
        new Thread(
            () -> {
              while (true) {
                try {
                  Class.forName("dev.nativemem.boot.ZipHooks", false, null);
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
      if (line.startsWith("open in hostile thread ")) {
        int n = Integer.parseInt(line.substring("open in hostile thread ".length()));
        Thread thread =
            new Thread(
                () -> {
                  for (int i = 0; i < n; i++) {
                    KEPT.add(openOne()[0]);
                  }
                },
                HOSTILE_THREAD_NAME);
        thread.start();
        thread.join();
        System.out.println("OPENED " + n);
      } else if (line.startsWith("open ")) {
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
      } else if (line.equals("profile in-process")) {
        // The application's own copy of nativemem (on its class path) samples every 4096 bytes.
        Class<?> nativeMemory = Class.forName("dev.nativemem.NativeMemory");
        Object profiler = nativeMemory.getMethod("profiling").invoke(null);
        profiler
            .getClass()
            .getMethod("resetWithSampleInterval", long.class)
            .invoke(profiler, 4096L);
        profiler.getClass().getMethod("start").invoke(profiler);
        System.out.println("PROFILING " + profiler);
      } else if (line.startsWith("dump in-process ")) {
        Object dump =
            Class.forName("dev.nativemem.NativeMemory")
                .getMethod("dumpProfile", java.nio.file.Path.class)
                .invoke(null, java.nio.file.Path.of(line.substring("dump in-process ".length())));
        System.out.println("DUMPED " + dump);
      } else if (line.equals("end")) {
        int ended = 0;
        for (Object kept : KEPT) {
          if (kept instanceof Inflater) {
            ((Inflater) kept).end();
            ended++;
          }
        }
        KEPT.clear();
        System.out.println("ENDED " + ended);
      } else if (line.equals("exit")) {
        return;
      } else if (line.equals("halt when attached")) {
        haltWhenAttached();
        System.out.println("ARMED");
      }
    }
  }
}
