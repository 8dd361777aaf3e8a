package dev.nativemem.tests;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.stream.Stream;
import org.junit.jupiter.api.Assumptions;

/**
 * The allocators a child JVM can run under. Adding one is one line in {@link #all()}; tests take
 * them as {@code @MethodSource("dev.nativemem.tests.AllocatorSetup#all")}.
 */
final class AllocatorSetup {
  final String name;
  final String kind;
  final Path preload;

  private AllocatorSetup(String name, String kind, Path preload) {
    this.name = name;
    this.kind = kind;
    this.preload = preload;
  }

  static Stream<AllocatorSetup> all() {
    return Stream.of(
        new AllocatorSetup("glibc", "glibc", null),
        new AllocatorSetup("debian-jemalloc", "jemalloc", ForkedJvm.DEBIAN_JEMALLOC),
        new AllocatorSetup("nativemem-jemalloc", "jemalloc", ForkedJvm.OWN_JEMALLOC));
  }

  static Stream<AllocatorSetup> jemallocs() {
    return all().filter(AllocatorSetup::isJemalloc);
  }

  boolean isJemalloc() {
    return kind.equals("jemalloc");
  }

  /** A child JVM under this allocator; skips the test if the allocator is not installed. */
  ForkedJvm jvm() {
    ForkedJvm jvm = new ForkedJvm().withTestClasses();
    if (preload != null) {
      Assumptions.assumeTrue(
          Files.exists(preload),
          preload + " is not there (.ci/run installs libjemalloc2; mvn package builds ours)");
      jvm.env("LD_PRELOAD", preload.toString());
    }
    return jvm;
  }

  @Override
  public String toString() {
    return name;
  }
}
