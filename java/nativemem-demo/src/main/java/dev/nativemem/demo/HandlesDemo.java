package dev.nativemem.demo;

import dev.nativemem.handles.NativeHandles;
import java.io.IOException;
import java.io.InputStream;
import java.net.URL;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The three handle incidents, reproduced across simulated job restarts, then fixed.
 *
 * <p>Tracking RocksDB and zlib needs the agent from JVM start. When the demo runs without it (as
 * {@code java -jar nativemem.jar demo} does), it runs itself again in a child JVM with {@code
 * -javaagent}: attaching to itself would need {@code -Djdk.attach.allowAttachSelf=true} on the
 * command line anyway and the {@code jdk.attach} module (absent from many runtime images), and a
 * late attach would miss the zlib streams the JVM opened before it.
 */
public final class HandlesDemo {
  private static final int RESTARTS = 3;
  private static final long CACHE_BYTES = 32L << 20;
  private static final String ROCKSDB_CLASS = "org.rocksdb.RocksDB";

  private HandlesDemo() {}

  /** The demo section: here if the agent is attached, else in a child JVM that has it. */
  public static void run() {
    System.out.println();
    System.out.println("Native handles: three incidents across " + RESTARTS + " job restarts");
    if (!rocksDbPresent()) {
      System.out.println(
          "  skipped: rocksdbjni is not on the class path; run the demo with it:\n"
              + "  java -jar nativemem-demo.jar demo, with lib/rocksdbjni-*.jar beside the jar");
      return;
    }
    if (NativeHandles.agentActive()) {
      try {
        main(new String[0]);
      } catch (Exception e) {
        System.out.println("  demo failed: " + e);
      }
      return;
    }
    System.out.println("  (running in a child JVM with -javaagent:nativemem.jar=level=full)");
    System.out.flush();
    try {
      List<String> command = new ArrayList<>();
      command.add(Paths.get(System.getProperty("java.home"), "bin", "java").toString());
      command.add("-javaagent:" + agentJar() + "=level=full");
      command.add("-Xshare:off"); // the agent joins the boot class path, which disables sharing
      command.add("-cp");
      command.add(System.getProperty("java.class.path"));
      command.add(HandlesDemo.class.getName());
      Process child = new ProcessBuilder(command).inheritIO().start();
      if (!child.waitFor(5, TimeUnit.MINUTES)) {
        child.destroyForcibly();
        System.out.println("  the demo JVM did not finish within 5 minutes");
      }
    } catch (Exception e) {
      System.out.println("  cannot start the demo JVM: " + e);
    }
  }

  /** The child JVM's entry: runs {@link IncidentJob} where it can see RocksDB. */
  public static void main(String[] args) throws Exception {
    Class.forName(IncidentJob.class.getName(), true, new JobClassLoader())
        .getMethod("main", String[].class)
        .invoke(null, (Object) args);
  }

  /** Defines {@link IncidentJob} itself, so it links against the application's class path. */
  private static final class JobClassLoader extends ClassLoader {
    JobClassLoader() {
      super(ClassLoader.getSystemClassLoader());
    }

    @Override
    protected Class<?> loadClass(String name, boolean resolve) throws ClassNotFoundException {
      if (!name.equals(IncidentJob.class.getName())) {
        return super.loadClass(name, resolve);
      }
      synchronized (getClassLoadingLock(name)) {
        Class<?> loaded = findLoadedClass(name);
        if (loaded != null) {
          return loaded;
        }
        String file = name.replace('.', '/') + ".class";
        try (InputStream in = ClassLoader.getSystemResourceAsStream(file)) {
          if (in == null) {
            throw new ClassNotFoundException(file + " is not on the class path");
          }
          byte[] code = in.readAllBytes();
          return defineClass(name, code, 0, code.length);
        } catch (IOException e) {
          throw new ClassNotFoundException(name, e);
        }
      }
    }
  }

  /** This jar: where the class path's copy of nativemem comes from. */
  private static String agentJar() throws Exception {
    URL self =
        ClassLoader.getSystemResource(HandlesDemo.class.getName().replace('.', '/') + ".class");
    String text = self.toString();
    if (!text.startsWith("jar:file:")) {
      throw new IllegalStateException("run the demo from the nativemem jar, not from " + text);
    }
    return Paths.get(new URL(text.substring(4, text.indexOf("!/"))).toURI()).toString();
  }

  private static boolean rocksDbPresent() {
    try {
      Class.forName(ROCKSDB_CLASS, false, HandlesDemo.class.getClassLoader());
      return true;
    } catch (ClassNotFoundException e) {
      return false;
    }
  }
}
