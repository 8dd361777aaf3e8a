package dev.nativemem.cli;

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
      out.println(
          "demo: the demo is in the nativemem-demo jar, not in this one; run"
              + " java -jar java/nativemem-demo/target/nativemem-demo-VERSION.jar demo");
      return 2;
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
