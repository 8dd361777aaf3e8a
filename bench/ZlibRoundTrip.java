import java.util.zip.DataFormatException;
import java.util.zip.Deflater;
import java.util.zip.Inflater;

/** The bench/ workloads' zlib churn: one record deflated and inflated with fresh streams. */
final class ZlibRoundTrip {
  private ZlibRoundTrip() {}

  /** Deflates {@code plain} into {@code packed} and inflates it back into {@code unpacked}. */
  static void run(byte[] plain, byte[] packed, byte[] unpacked) throws DataFormatException {
    Deflater deflater = new Deflater();
    deflater.setInput(plain);
    deflater.finish();
    int length = deflater.deflate(packed);
    deflater.end();
    Inflater inflater = new Inflater();
    inflater.setInput(packed, 0, length);
    inflater.inflate(unpacked);
    inflater.end();
  }
}
