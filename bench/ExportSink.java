import com.sun.net.httpserver.HttpServer;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A local endpoint for the export benchmark (not a test): answers every request 200 with an empty
 * body on 127.0.0.1, in a process of its own so that its CPU is not the exporting JVM's. Prints its
 * port, then serves until killed. {@code java bench/ExportSink.java}
 */
public final class ExportSink {
  public static void main(String[] args) throws Exception {
    AtomicLong bodies = new AtomicLong();
    AtomicLong bytes = new AtomicLong();
    HttpServer server =
        HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
    server.createContext(
        "/",
        exchange -> {
          bytes.addAndGet(exchange.getRequestBody().readAllBytes().length);
          bodies.incrementAndGet();
          exchange.sendResponseHeaders(200, -1);
          exchange.close();
        });
    Runtime.getRuntime()
        .addShutdownHook(
            new Thread(() -> System.out.println("RECEIVED " + bodies.get() + " " + bytes.get())));
    server.start();
    System.out.println(server.getAddress().getPort());
    System.out.flush();
  }
}
