package dev.nativemem.apps.spring;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.lang.ref.WeakReference;
import java.util.ArrayList;
import java.util.List;
import org.springframework.boot.CommandLineRunner;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;

/**
 * Reads a resource of its own executable jar through Spring Boot's nested-jar loader, N times, in
 * one of four ways, and prints what it did: {@code leak} (read, never closed, kept), {@code
 * closing} (read, then all closed), {@code serve} (as {@code closing}, then runs until stopped) or
 * {@code dropped} (read, never closed, dropped and collected).
 */
@SpringBootApplication
public class ResourceStreamsApp implements CommandLineRunner {
  private static final String RESOURCE = "/payload.txt";
  private static final long COLLECT_MILLIS = 20_000;

  /** Keeps the leaked streams reachable until the JVM exits. */
  private static final List<InputStream> KEPT = new ArrayList<>();

  public static void main(String[] args) {
    SpringApplication.run(ResourceStreamsApp.class, args);
  }

  @Override
  public void run(String... args) throws Exception {
    String variant = args[0];
    int n = Integer.parseInt(args[1]);
    switch (variant) {
      case "leak":
        for (int i = 0; i < n; i++) {
          KEPT.add(openAndRead());
        }
        System.out.println("streams_opened " + KEPT.size());
        break;
      case "closing":
      case "serve":
        // All open at once, so that the loader's pool runs dry and the application's reads create
        // Inflaters of their own; closing hands them back to the pool. "serve" then runs until
        // stopped: a user's attach asks the live JVM what it holds.
        List<InputStream> streams = new ArrayList<>();
        for (int i = 0; i < n; i++) {
          streams.add(openAndRead());
        }
        for (InputStream in : streams) {
          in.close();
        }
        System.out.println("streams_opened " + streams.size());
        if (variant.equals("serve")) {
          System.out.println("pid " + ProcessHandle.current().pid());
          Thread.sleep(Long.MAX_VALUE);
        }
        break;
      case "dropped":
        List<WeakReference<InputStream>> dropped = new ArrayList<>();
        for (int i = 0; i < n; i++) {
          dropped.add(new WeakReference<>(openAndRead()));
        }
        System.out.println("streams_opened " + dropped.size());
        System.out.println("streams_collected " + collect(dropped));
        break;
      default:
        throw new IllegalArgumentException(
            "variant is leak, closing, serve or dropped: " + variant);
    }
  }

  /** Opens the resource and reads its first bytes: that is when the stream needs an Inflater. */
  private static InputStream openAndRead() {
    try {
      InputStream in = ResourceStreamsApp.class.getResourceAsStream(RESOURCE);
      if (in == null) {
        throw new IllegalStateException(RESOURCE + " is not in the application's jar");
      }
      byte[] first = new byte[256];
      if (in.read(first) <= 0) { // nativemem-test: first-read
        throw new IllegalStateException(RESOURCE + " is empty");
      }
      return in;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /**
   * Collects until every dropped stream is gone, then lets the cleaners that end their Inflaters
   * run; returns how many were collected.
   */
  private static long collect(List<WeakReference<InputStream>> dropped)
      throws InterruptedException {
    long deadline = System.currentTimeMillis() + COLLECT_MILLIS;
    while (dropped.stream().anyMatch(r -> r.get() != null)
        && System.currentTimeMillis() < deadline) {
      System.gc();
      Thread.sleep(50);
    }
    for (int i = 0; i < 5; i++) {
      System.gc();
      Thread.sleep(100);
    }
    return dropped.stream().filter(r -> r.get() == null).count();
  }
}
