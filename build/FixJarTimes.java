// Sets every entry of a jar to one time, keeping entry order and contents: the jar tool (which the
// core module runs after shading to list its packages in the module descriptor) stores the build's
// time for the entries it rewrites, and JDK 17's jar tool has no --date option.
//   java build/FixJarTimes.java <jar> <ISO-8601 instant, project.build.outputTimestamp>
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Instant;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.util.zip.ZipEntry;
import java.util.zip.ZipInputStream;
import java.util.zip.ZipOutputStream;

public class FixJarTimes {
  public static void main(String[] args) throws IOException {
    Path jar = Path.of(args[0]);
    LocalDateTime time = LocalDateTime.ofInstant(Instant.parse(args[1]), ZoneOffset.UTC);
    Path temp = Files.createTempFile(jar.getParent(), jar.getFileName().toString(), ".tmp");
    try (InputStream raw = Files.newInputStream(jar);
        ZipInputStream in = new ZipInputStream(raw);
        OutputStream rawOut = Files.newOutputStream(temp);
        ZipOutputStream out = new ZipOutputStream(rawOut)) {
      for (ZipEntry entry; (entry = in.getNextEntry()) != null; ) {
        ByteArrayOutputStream content = new ByteArrayOutputStream();
        in.transferTo(content);
        ZipEntry copy = new ZipEntry(entry.getName());
        copy.setTimeLocal(time);
        out.putNextEntry(copy);
        content.writeTo(out);
        out.closeEntry();
      }
    }
    // The jar keeps its own permissions (a temporary file is made 0600): other users run it, as
    // the tests' JVMs of another uid do.
    Files.setPosixFilePermissions(temp, Files.getPosixFilePermissions(jar));
    Files.move(temp, jar, StandardCopyOption.REPLACE_EXISTING);
  }
}
