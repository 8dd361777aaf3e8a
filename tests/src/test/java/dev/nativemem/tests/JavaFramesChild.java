package dev.nativemem.tests;

import dev.nativemem.NativeMemory;
import dev.nativemem.profile.HeapProfiler;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Supplier;
import java.util.zip.Inflater;

/**
 * Runs in a forked JVM with Java frames on: plants live Inflaters from known Java lines and prints
 * each site's frame as the JVM itself names it ({@link StackTraceElement}) with the native bytes
 * the allocating thread kept (jemalloc's {@code thread.allocated} minus {@code
 * thread.deallocated}).
 */
public final class JavaFramesChild {
  private static final List<Object> LIVE = new ArrayList<>();
  private static final Supplier<Object[]> THROUGH_LAMBDA =
      () -> new Object[] {new Inflater(), new Throwable()};

  public static void main(String[] args) throws Exception {
    if (args[0].equals("agent")) {
      // Before anything touches the front door: what the agent's start alone did.
      System.out.println("RECORDING " + HeapProfiler.get().isRecordingJavaFrames());
      System.out.println("DONE 0");
      return;
    }
    HeapProfiler profiler = NativeMemory.profiling();
    switch (args[0]) {
      case "sites":
        profiler.resetWithSampleInterval(Long.parseLong(args[2]));
        System.out.println("JAVA_FRAMES " + profiler.javaFrames(true));
        profiler.start();
        for (int i = 0; i < 20_000; i++) {
          ((Inflater) plantCompiled()[0]).end();
        }
        int count = Integer.parseInt(args[3]);
        site("interpreted", count, JavaFramesChild::plantInterpreted);
        site("compiled", count, JavaFramesChild::plantCompiled);
        site("lambda", count, JavaFramesChild::plantThroughLambda);
        NativeMemory.dumpProfile(Paths.get(args[1]));
        break;
      case "glibc":
        try {
          profiler.javaFrames(true);
          System.out.println("ERROR none");
        } catch (RuntimeException e) {
          System.out.println("ERROR " + e.getClass().getName() + ": " + e.getMessage());
        }
        break;
      case "setting":
        System.out.println("RECORDING " + profiler.isRecordingJavaFrames());
        profiler.javaFrames(false);
        System.out.println("AFTER_OFF " + profiler.isRecordingJavaFrames());
        break;
      default:
        throw new IllegalArgumentException(args[0]);
    }
    System.out.println("DONE " + LIVE.size());
  }

  static Object[] plantInterpreted() {
    return new Object[] {new Inflater(), new Throwable()};
  }

  static Object[] plantCompiled() {
    return new Object[] {new Inflater(), new Throwable()};
  }

  static Object[] plantThroughLambda() {
    return THROUGH_LAMBDA.get();
  }

  /** {@code SITE <name> <frame> <bytes>}: the frame as the JVM names it, the bytes kept. */
  private static void site(String name, int count, Supplier<Object[]> plant) {
    long before = liveBytesOfThisThread();
    StackTraceElement frame = null;
    for (int i = 0; i < count; i++) {
      Object[] made = plant.get();
      LIVE.add(made[0]);
      if (frame == null) {
        frame = ((Throwable) made[1]).getStackTrace()[0];
      }
    }
    long bytes = liveBytesOfThisThread() - before;
    String named =
        frame.getClassName()
            + "."
            + frame.getMethodName()
            + "("
            + frame.getFileName()
            + ":"
            + frame.getLineNumber()
            + ")";
    System.out.println("SITE " + name + " " + named + " " + bytes);
  }

  private static long liveBytesOfThisThread() {
    return NativeMemory.mallctl("thread.allocated") - NativeMemory.mallctl("thread.deallocated");
  }
}
