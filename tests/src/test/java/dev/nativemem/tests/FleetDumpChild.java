package dev.nativemem.tests;

import dev.nativemem.NativeMemory;
import dev.nativemem.profile.HeapProfiler;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.zip.Deflater;

/**
 * One process of a fleet, under the preload allocator with Java frames on: keeps Deflaters made at
 * one Java line named for its host ({@code args[1]}: {@code taskmanager-7} or {@code web-1}),
 * prints that line as the JVM names it ({@code SITE Class.method File.java:N}), and dumps its heap
 * profile to {@code args[0]}.
 */
public final class FleetDumpChild {
  private static final List<Deflater> LIVE = new ArrayList<>();

  private FleetDumpChild() {}

  public static void main(String[] args) throws Exception {
    HeapProfiler profiler = NativeMemory.profiling();
    System.out.println("JAVA_FRAMES " + profiler.javaFrames(true));
    profiler.start();
    StackTraceElement site = null;
    for (int i = 0; i < 60; i++) {
      Object[] made = args[1].equals("taskmanager-7") ? onTaskManager7() : onWeb1();
      LIVE.add((Deflater) made[0]);
      site = ((Throwable) made[1]).getStackTrace()[0];
    }
    System.out.println(
        "SITE "
            + site.getClassName()
            + "."
            + site.getMethodName()
            + " "
            + site.getFileName()
            + ":"
            + site.getLineNumber());
    NativeMemory.dumpProfile(Paths.get(args[0]));
    System.out.println("DONE " + LIVE.size());
  }

  static Object[] onTaskManager7() {
    return new Object[] {new Deflater(9), new Throwable()};
  }

  static Object[] onWeb1() {
    return new Object[] {new Deflater(9), new Throwable()};
  }
}
