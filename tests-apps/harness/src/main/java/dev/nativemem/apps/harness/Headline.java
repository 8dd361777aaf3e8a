package dev.nativemem.apps.harness;

import java.lang.reflect.Method;
import java.net.MalformedURLException;
import java.net.URL;
import java.net.URLClassLoader;

/**
 * The "created at" frame the text report prints for a creation stack, computed by the agent jar
 * under test itself (the JSON report carries the stack only), loaded apart from the test's class
 * path so that the test and the child JVM use one and the same jar.
 */
final class Headline {
  private static final String RULE = "dev.nativemem.handles.tracking.CreationSites";
  private static Method applicationFrame;

  private Headline() {}

  static synchronized String of(String stack) {
    try {
      if (applicationFrame == null) {
        URLClassLoader jar = new URLClassLoader(new URL[] {agentJar()}, null);
        applicationFrame =
            Class.forName(RULE, true, jar).getMethod("applicationFrame", String.class);
      }
      return (String) applicationFrame.invoke(null, stack);
    } catch (ReflectiveOperationException e) {
      throw new IllegalStateException(
          "the agent jar has no " + RULE + ".applicationFrame(String): update " + Headline.class,
          e);
    }
  }

  private static URL agentJar() {
    try {
      return AppJvm.AGENT_JAR.toUri().toURL();
    } catch (MalformedURLException e) {
      throw new IllegalStateException(e);
    }
  }
}
