package dev.nativemem.tests;

import dev.nativemem.NativeMemory;
import dev.nativemem.profile.HeapProfile;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Paths;

/** Runs in a forked JVM for {@link SharedHostTest}: one victim scenario per invocation. */
public final class HostileProbe {
  private HostileProbe() {}

  public static void main(String[] args) throws Exception {
    switch (args[0]) {
      case "hold":
        // Loads the library (the shared copy), then in a second class loader, which gets a
        // per-process copy; says where that is, and keeps both until stdin closes.
        NativeMemory.version();
        URLClassLoader second =
            new URLClassLoader(
                new URL[] {Paths.get(args[1]).toUri().toURL()},
                ClassLoader.getPlatformClassLoader());
        Object copy =
            Class.forName("dev.nativemem.NativeMemory", true, second)
                .getMethod("version")
                .invoke(null);
        System.out.println("LOADED " + copy.getClass().getMethod("libraryPath").invoke(copy));
        System.out.flush();
        while (System.in.read() >= 0) {
          // wait
        }
        second.close();
        break;
      case "two-loaders":
        for (int i = 0; i < 2; i++) {
          try (URLClassLoader loader =
              new URLClassLoader(
                  new URL[] {Paths.get(args[1]).toUri().toURL()},
                  ClassLoader.getPlatformClassLoader())) {
            Class<?> facade = Class.forName("dev.nativemem.NativeMemory", true, loader);
            Object versions = facade.getMethod("version").invoke(null);
            System.out.println(
                "LOADER " + i + " " + versions.getClass().getMethod("toJson").invoke(versions));
          }
        }
        break;
      case "mallctl":
        long before = NativeMemory.mallctl("arenas.narenas");
        int refused = 0;
        for (int i = 0; i < 500; i++) {
          refused += refuses("arenas.create") + refuses("tcache.create");
        }
        System.out.println("REFUSED " + refused);
        System.out.println("NARENAS " + before + " " + NativeMemory.mallctl("arenas.narenas"));
        System.out.println("VERSION " + message("version"));
        System.out.println("CREATE " + message("arenas.create"));
        break;
      case "dump-on-cue":
        // Says its pid, waits for a line (the attacker plants meanwhile), then dumps.
        NativeMemory.profiling().start();
        System.out.println("PID " + ProcessHandle.current().pid());
        System.out.flush();
        new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8)).readLine();
        HeapProfile profile = NativeMemory.dumpProfile(Paths.get(args[1]));
        System.out.println("DUMPED " + profile.path());
        break;
      default:
        throw new IllegalArgumentException(args[0]);
    }
  }

  private static int refuses(String key) {
    try {
      NativeMemory.mallctl(key);
      return 0;
    } catch (IllegalArgumentException expected) {
      return 1;
    }
  }

  private static String message(String key) {
    try {
      return "read " + NativeMemory.mallctl(key);
    } catch (RuntimeException e) {
      return e.getClass().getSimpleName() + ": " + e.getMessage();
    }
  }
}
