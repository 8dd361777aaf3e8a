import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.lang.reflect.Method;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.attribute.BasicFileAttributes;
import java.security.MessageDigest;
import java.util.zip.ZipFile;

/**
 * Benchmark (not a test), run by bench/jar-key-cost.sh: the CPU time one key of the agent jar
 * costs in a fresh JVM, cold, as an agent's start pays it. The jar is already open and read (the
 * library loader opened it), NIO file attributes already used (it checked directories).
 *
 * <p>usage: java -XDstringConcat=inline JarKeyCost.java JAR size-mtime|content|sha256
 */
public final class JarKeyCost {
  public static void main(String[] args) throws Exception {
    ThreadMXBean threads = ManagementFactory.getThreadMXBean();
    threads.getCurrentThreadCpuTime();
    Path jar = Paths.get(args[0]);
    Method contentKey =
        Class.forName("dev.nativemem.internal.NativeLibraryLoader")
            .getDeclaredMethod("contentKey", ZipFile.class);
    contentKey.setAccessible(true);
    try (ZipFile zip = new ZipFile(jar.toFile())) {
      zip.getEntry("dev/nativemem/nativemem.properties");
      Files.readAttributes(jar.getParent(), BasicFileAttributes.class).lastModifiedTime();
      long before = threads.getCurrentThreadCpuTime();
      Object key;
      if (args[1].equals("size-mtime")) { // the key before content keys
        BasicFileAttributes attributes = Files.readAttributes(jar, BasicFileAttributes.class);
        key = attributes.size() + "-" + attributes.lastModifiedTime().toMillis();
      } else if (args[1].equals("content")) { // NativeLibraryLoader.contentKey
        key = contentKey.invoke(null, zip);
      } else { // SHA-256 of the jar's bytes
        key = MessageDigest.getInstance("SHA-256").digest(Files.readAllBytes(jar));
      }
      long after = threads.getCurrentThreadCpuTime();
      System.out.println((after - before) / 1e6 + " " + key.hashCode());
    }
  }
}
