package dev.nativemem.tests;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.zip.DataFormatException;
import java.util.zip.Deflater;
import java.util.zip.Inflater;

/**
 * A planted native leak for {@link OomKillTest}: Inflaters that are used once and never ended, all
 * from one line ({@link #leakOne}), held so zlib's buffers stay. Fast until RSS reaches 70% of the
 * limit given, then about 4 MiB/s (a few ColumnFamilyOptions' caches a minute, sped up), so that
 * the kill comes well over 10 s after the first threshold's crossing: the watch must escalate to
 * leave evidence close to the kill.
 */
public final class OomLeakChild {
  private static final List<Inflater> HELD = new ArrayList<>();
  private static final byte[] COMPRESSED = compressed();
  private static final byte[] OUT = new byte[64 * 1024];

  private OomLeakChild() {}

  public static void main(String[] args) throws Exception {
    long limit = Long.parseLong(args[0]);
    long page = 4096;
    System.out.println("leaking");
    while (true) {
      long rss =
          Long.parseLong(Files.readString(Paths.get("/proc/self/statm")).split(" ")[1]) * page;
      int batch = rss < limit * 7 / 10 ? 2000 : 10;
      for (int i = 0; i < batch; i++) {
        HELD.add(leakOne());
      }
      if (batch < 2000) {
        Thread.sleep(100);
      }
    }
  }

  /** One Inflater with its window filled (about 40 KiB of zlib memory), never ended. */
  static Inflater leakOne() throws DataFormatException {
    Inflater inflater = new Inflater(); // planted leak
    inflater.setInput(COMPRESSED);
    inflater.inflate(OUT);
    return inflater;
  }

  private static byte[] compressed() {
    byte[] text = "nativemem incident ".repeat(4096).getBytes(StandardCharsets.US_ASCII);
    Deflater deflater = new Deflater();
    deflater.setInput(text);
    deflater.finish();
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    byte[] buffer = new byte[8192];
    while (!deflater.finished()) {
      out.write(buffer, 0, deflater.deflate(buffer));
    }
    deflater.end();
    return out.toByteArray();
  }
}
