package dev.nativemem.tests;

import dev.nativemem.watch.MemoryWatch;

/**
 * Runs in a JVM whose class path has SLF4J bound to log4j 2 (as Flink's {@code lib/} has) and the
 * agent with the watch on: asks the watch for a bundle and prints {@code BUNDLE <path>}.
 */
public final class FrameworkLogChild {
  private FrameworkLogChild() {}

  public static void main(String[] args) {
    System.out.println("BUNDLE " + MemoryWatch.current().capture("FrameworkLogChild"));
  }
}
