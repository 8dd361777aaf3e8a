package dev.nativemem.agent;

import dev.nativemem.handles.tracking.RocksFamily;
import java.io.InputStream;
import java.net.URI;
import java.nio.file.FileSystem;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.security.MessageDigest;
import java.util.Collections;
import java.util.EnumSet;
import java.util.HexFormat;
import java.util.Map;
import java.util.TreeMap;
import java.util.zip.ZipEntry;
import java.util.zip.ZipFile;

/**
 * Prints a SHA-256 of what the agent's transformer makes of each class it instruments in the given
 * jars and of the running JDK's zip classes, one line per class: run it against two builds of the
 * agent and diff the output to show that a change of the transformer changes no instrumented byte
 * (build/transformed-classes.sh does both).
 */
public final class TransformedClasses {
  private static final String[] JDK_CLASSES = {
    "java/util/zip/Inflater",
    "java/util/zip/Deflater",
    "java/util/zip/Inflater$InflaterZStreamRef",
    "java/util/zip/Deflater$DeflaterZStreamRef",
    "java/util/zip/ZipFile$CleanableResource"
  };

  private TransformedClasses() {}

  public static void main(String[] jars) throws Exception {
    HandleTransformer transformer = new HandleTransformer(EnumSet.allOf(RocksFamily.class), true);
    Map<String, String> hashes = new TreeMap<>();
    for (String jar : jars) {
      String jarName = jar.substring(jar.lastIndexOf('/') + 1);
      try (ZipFile zip = new ZipFile(jar)) {
        for (ZipEntry entry : Collections.list(zip.entries())) {
          String name = entry.getName();
          String internal = name.substring(0, Math.max(0, name.length() - ".class".length()));
          if (name.endsWith(".class") && transformer.instruments(internal)) {
            try (InputStream in = zip.getInputStream(entry)) {
              hashes.put(jarName + " " + internal, hash(transformer, internal, in.readAllBytes()));
            }
          }
        }
      }
    }
    FileSystem jrt = FileSystems.getFileSystem(URI.create("jrt:/"));
    for (String internal : JDK_CLASSES) {
      byte[] original =
          Files.readAllBytes(jrt.getPath("modules", "java.base", internal + ".class"));
      String name = "jdk-" + Runtime.version().feature() + " " + internal;
      hashes.put(name, hash(transformer, internal, original));
    }
    hashes.forEach((name, hash) -> System.out.println(hash + " " + name));
  }

  private static String hash(HandleTransformer transformer, String internal, byte[] original)
      throws Exception {
    byte[] made = transformer.transform(null, internal, null, null, original);
    if (made == null) {
      return "not-instrumented";
    }
    byte[] digest = MessageDigest.getInstance("SHA-256").digest(made);
    return HexFormat.of().formatHex(digest);
  }
}
