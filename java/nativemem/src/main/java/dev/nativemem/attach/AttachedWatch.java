package dev.nativemem.attach;

import dev.nativemem.watch.MemoryWatch;
import dev.nativemem.watch.MemoryWatchMXBean;
import dev.nativemem.watch.WatchOptions;
import java.io.PrintStream;
import java.lang.management.ManagementFactory;
import java.nio.file.Paths;
import java.util.List;
import javax.management.JMException;
import javax.management.MBeanServer;
import javax.management.ObjectName;

/**
 * {@code nativemem attach <pid> watch|incident}: the target's running watch is reached through its
 * MBean, whichever class loader started it (the application's, the agent's, an earlier attach).
 */
final class AttachedWatch {
  private AttachedWatch() {}

  private static ObjectName name() {
    try {
      return new ObjectName(MemoryWatchMXBean.OBJECT_NAME);
    } catch (JMException e) {
      throw new IllegalStateException(e);
    }
  }

  /** {@code watch [status | start [--dir DIR] | stop]}. */
  static int watch(List<String> options, PrintStream out, PrintStream err) throws JMException {
    MBeanServer server = ManagementFactory.getPlatformMBeanServer();
    boolean running = server.isRegistered(name());
    String action = options.isEmpty() ? "status" : options.get(0);
    switch (action) {
      case "status":
        if (!running) {
          out.println("no memory watch runs in this JVM; 'watch start [--dir DIR]' starts one");
          return 0;
        }
        out.println("memory watch running: " + server.getAttribute(name(), "Options"));
        out.println("samples: " + server.getAttribute(name(), "Samples"));
        String last = (String) server.getAttribute(name(), "LastBundle");
        out.println("last bundle: " + (last.isEmpty() ? "none yet" : last));
        return 0;
      case "start":
        if (running) {
          out.println(
              "a memory watch runs already, writing to "
                  + server.getAttribute(name(), "Directory"));
          return 0;
        }
        WatchOptions watchOptions = WatchOptions.fromSystemProperties();
        int dir = options.indexOf("--dir");
        if (dir >= 0) {
          if (dir + 1 >= options.size()) {
            err.println("nativemem attach watch start: --dir needs a directory");
            return 2;
          }
          watchOptions = watchOptions.withDirectory(Paths.get(options.get(dir + 1)));
        }
        MemoryWatch watch = MemoryWatch.start(watchOptions);
        out.println("memory watch started, bundles in " + watch.directory());
        return 0;
      case "stop":
        if (!running) {
          out.println("no memory watch runs in this JVM");
          return 0;
        }
        server.invoke(name(), "stop", new Object[0], new String[0]);
        out.println("memory watch stopped");
        return 0;
      default:
        err.println("nativemem attach watch: say 'status', 'start [--dir DIR]' or 'stop'");
        return 2;
    }
  }

  /**
   * {@code incident [REASON]}: a bundle from the running watch (its timeline included), or, with
   * none running, from a watch started for this one capture and stopped after it.
   */
  static int incident(List<String> options, PrintStream out) throws JMException {
    String reason =
        "nativemem attach incident" + (options.isEmpty() ? "" : ": ") + String.join(" ", options);
    MBeanServer server = ManagementFactory.getPlatformMBeanServer();
    if (server.isRegistered(name())) {
      Object bundle =
          server.invoke(
              name(), "capture", new Object[] {reason}, new String[] {String.class.getName()});
      out.println(bundle);
      return 0;
    }
    try (MemoryWatch watch = MemoryWatch.start(WatchOptions.fromSystemProperties())) {
      out.println(watch.capture(reason + " (no watch was running: one sample)"));
    }
    return 0;
  }
}
