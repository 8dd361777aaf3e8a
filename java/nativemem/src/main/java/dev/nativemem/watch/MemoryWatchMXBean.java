package dev.nativemem.watch;

/**
 * The memory watch over JMX, registered as {@value #OBJECT_NAME} while a watch runs: {@code
 * capture} writes a bundle now (what {@code nativemem attach <pid> incident} calls).
 */
public interface MemoryWatchMXBean {
  String OBJECT_NAME = "dev.nativemem:type=MemoryWatch";

  /** Captures a bundle now; returns its directory. */
  String capture(String reason);

  /** Stops the watch (bundles stay). */
  void stop();

  /** The watch directory. */
  String getDirectory();

  /** The last bundle this watch wrote, or an empty string. */
  String getLastBundle();

  /** Samples in the ring. */
  int getSamples();

  /** The options, as one line. */
  String getOptions();
}
