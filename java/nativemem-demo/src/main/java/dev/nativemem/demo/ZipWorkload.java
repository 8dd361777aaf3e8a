package dev.nativemem.demo;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.util.ArrayList;
import java.util.List;
import java.util.zip.GZIPInputStream;
import java.util.zip.GZIPOutputStream;

/** zlib behind java.util.zip: streams that are never closed hold native buffers until GC. */
final class ZipWorkload {
  private ZipWorkload() {}

  /** Returns the open streams; their zlib state is what the profile shows. */
  static List<AutoCloseable> run() throws IOException {
    byte[] data = new byte[256 * 1024];
    for (int i = 0; i < data.length; i++) {
      data[i] = (byte) (i * 31 % 97);
    }
    ByteArrayOutputStream compressed = new ByteArrayOutputStream();
    try (GZIPOutputStream out = new GZIPOutputStream(compressed)) {
      out.write(data);
    }
    byte[] gz = compressed.toByteArray();
    List<AutoCloseable> open = new ArrayList<>();
    for (int i = 0; i < 2000; i++) {
      InputStream in = new GZIPInputStream(new ByteArrayInputStream(gz));
      in.read(new byte[1024]);
      open.add(in);
    }
    System.out.println("    zip: 2000 GZIPInputStreams opened and not yet closed");
    return open;
  }
}
