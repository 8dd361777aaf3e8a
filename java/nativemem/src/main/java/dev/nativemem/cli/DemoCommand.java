package dev.nativemem.cli;

import dev.nativemem.internal.NativeLibraryLoader;
import java.lang.reflect.InvocationTargetException;
import org.apache.commons.cli.CommandLine;
import org.apache.commons.cli.Options;

/**
 * {@code demo}: runs {@code dev.nativemem.demo.Demo}, which lives in the nativemem-demo jar (with
 * rocksdbjni beside it), not in the core jar.
 */
final class DemoCommand extends CliCommand {
  static final String DEMO_CLASS = "dev.nativemem.demo.Demo";

  DemoCommand() {
    super(
        "demo",
        "Show what nativemem sees in this JVM, then a heap profile of a RocksDB and zip workload.",
        "");
  }

  @Override
  Options options() {
    return new Options();
  }

  @Override
  int run(CommandLine line) {
    Class<?> demo;
    try {
      demo = Class.forName(DEMO_CLASS, true, DemoCommand.class.getClassLoader());
    } catch (ClassNotFoundException e) {
      // On standard error with exit code 1, as every command's failure.
      throw new IllegalStateException(
          "the demo is not in this jar but in nativemem-demo, which is built with the sources"
              + " (mvn -B -q package -DskipTests in a checkout), not published; then run java -jar"
              + " java/nativemem-demo/target/nativemem-demo-"
              + NativeLibraryLoader.javaVersion()
              + ".jar demo");
    }
    try {
      return (Integer) demo.getMethod("run").invoke(null);
    } catch (InvocationTargetException e) {
      Throwable cause = e.getCause();
      if (cause instanceof RuntimeException) {
        throw (RuntimeException) cause;
      }
      if (cause instanceof Error) {
        throw (Error) cause;
      }
      throw new IllegalStateException("demo failed: " + cause, cause);
    } catch (ReflectiveOperationException e) {
      throw new IllegalStateException(DEMO_CLASS + " is not the demo of this version: " + e, e);
    }
  }
}
