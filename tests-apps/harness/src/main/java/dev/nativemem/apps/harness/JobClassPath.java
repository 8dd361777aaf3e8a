package dev.nativemem.apps.harness;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Paths;

/**
 * The class path of a module's application for its child JVM, from the failsafe properties its pom
 * sets: {@code job.classes} (its compiled classes) and {@code job.classpath.file} (its runtime
 * dependencies, written by {@code dependency:build-classpath}).
 */
public final class JobClassPath {
  private JobClassPath() {}

  /** The dependencies alone, as {@code known-leaks --class-path} reads them. */
  public static String dependencies() throws IOException {
    return Files.readString(Paths.get(System.getProperty("job.classpath.file"))).trim();
  }

  /** The application's classes, then its dependencies. */
  public static String withClasses() throws IOException {
    return System.getProperty("job.classes") + File.pathSeparator + dependencies();
  }
}
