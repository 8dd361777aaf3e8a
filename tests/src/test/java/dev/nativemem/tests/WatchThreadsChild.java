package dev.nativemem.tests;

import dev.nativemem.NativeMemory;

/**
 * For {@link WatchStartTest}: uses the facade once (as an application does), then prints how many
 * memory watches sample in this JVM, by their sampling threads.
 */
public final class WatchThreadsChild {
  private WatchThreadsChild() {}

  public static void main(String[] args) throws InterruptedException {
    NativeMemory.stats();
    Thread.sleep(500);
    long watches =
        Thread.getAllStackTraces().keySet().stream()
            .filter(t -> t.getName().equals("nativemem-watch"))
            .count();
    System.out.println("WATCHES " + watches);
  }
}
