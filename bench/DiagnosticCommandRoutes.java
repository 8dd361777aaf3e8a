import dev.nativemem.internal.DiagnosticCommands;
import dev.nativemem.internal.NativeLibraryLoader;
import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.lang.management.ManagementFactory;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.Channels;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import javax.management.ObjectName;

/**
 * The three in-process routes to one diagnostic command ({@code VM.native_memory summary scale=b}
 * under NMT, {@code GC.heap_info} without): the management interface (what nativemem runs), the
 * DiagnosticCommand MBean (java.management's route), and the JVM's own attach socket. Prints the median
 * µs of each over {@code args[0]} calls after as many warm-up calls.
 */
public class DiagnosticCommandRoutes {
  interface Route {
    String run() throws Exception;
  }

  public static void main(String[] args) throws Exception {
    int n = Integer.parseInt(args[0]);
    NativeLibraryLoader.load();
    boolean nmt =
        ManagementFactory.getRuntimeMXBean().getInputArguments().stream()
            .anyMatch(a -> a.startsWith("-XX:NativeMemoryTracking=s"));
    String command = nmt ? "VM.native_memory" : "GC.heap_info";
    String[] arguments = nmt ? new String[] {"summary", "scale=b"} : new String[0];
    String operation = nmt ? "vmNativeMemory" : "gcHeapInfo";
    ObjectName name = new ObjectName("com.sun.management:type=DiagnosticCommand");
    Path socket = Path.of("/tmp/.java_pid" + ProcessHandle.current().pid());
    startListener(socket);
    Route[] routes = {
      () -> DiagnosticCommands.run(command, arguments),
      () ->
          (String)
              ManagementFactory.getPlatformMBeanServer()
                  .invoke(
                      name,
                      operation,
                      nmt ? new Object[] {arguments} : null,
                      nmt ? new String[] {String[].class.getName()} : null),
      () -> overSocket(socket, command + (nmt ? " summary scale=b" : ""))
    };
    String[] labels = {"management interface", "DiagnosticCommand MBean", "attach socket"};
    for (int r = 0; r < routes.length; r++) {
      long[] micros = new long[n];
      for (int i = 0; i < 2 * n; i++) {
        long start = System.nanoTime();
        String text = routes[r].run();
        if (i >= n) {
          micros[i - n] = (System.nanoTime() - start) / 1000;
        }
        if (text.length() < 20) {
          throw new IllegalStateException(labels[r] + " answered: " + text);
        }
      }
      Arrays.sort(micros);
      System.out.printf(
          "%-24s %s: median %d µs (min %d, max %d) over %d calls%n",
          labels[r], command, micros[n / 2], micros[0], micros[n - 1], n);
    }
  }

  /** HotSpot's attach trigger: {@code .attach_pid<pid>} in the cwd, then SIGQUIT to itself. */
  static void startListener(Path socket) throws Exception {
    if (Files.exists(socket)) {
      return;
    }
    Path trigger = Path.of(".attach_pid" + ProcessHandle.current().pid());
    Files.createFile(trigger);
    new ProcessBuilder("kill", "-QUIT", Long.toString(ProcessHandle.current().pid()))
        .start()
        .waitFor();
    for (int i = 0; i < 500 && !Files.exists(socket); i++) {
      Thread.sleep(10);
    }
    Files.deleteIfExists(trigger);
  }

  /** One {@code jcmd} request over the attach protocol (version 1). */
  static String overSocket(Path socket, String line) throws Exception {
    try (SocketChannel channel = SocketChannel.open(UnixDomainSocketAddress.of(socket))) {
      String request = "1\0jcmd\0" + line + "\0\0\0";
      channel.write(ByteBuffer.wrap(request.getBytes(StandardCharsets.UTF_8)));
      InputStream in = Channels.newInputStream(channel);
      ByteArrayOutputStream out = new ByteArrayOutputStream();
      in.transferTo(out);
      return out.toString(StandardCharsets.UTF_8);
    }
  }
}
