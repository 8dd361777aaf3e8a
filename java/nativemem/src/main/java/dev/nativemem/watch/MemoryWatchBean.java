package dev.nativemem.watch;

import java.nio.file.Path;

/** The {@link MemoryWatchMXBean} of one running watch. */
final class MemoryWatchBean implements MemoryWatchMXBean {
  private final MemoryWatch watch;

  MemoryWatchBean(MemoryWatch watch) {
    this.watch = watch;
  }

  @Override
  public String capture(String reason) {
    return watch.capture(reason).toString();
  }

  @Override
  public void stop() {
    watch.close();
  }

  @Override
  public String getDirectory() {
    return watch.directory().toString();
  }

  @Override
  public String getLastBundle() {
    Path last = watch.lastBundle();
    return last == null ? "" : last.toString();
  }

  @Override
  public int getSamples() {
    return watch.samples();
  }

  @Override
  public String getOptions() {
    return watch.options().toString();
  }
}
