package dev.nativemem.tests;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A heap_v2 dump read independently of nativemem, and jeprof's reading of it: the two sides of
 * every profile assertion.
 */
final class HeapDump {
  final long interval;
  final long headerBytes;
  final long headerObjects;
  final List<long[]> stacks = new ArrayList<>();

  private HeapDump(long interval, long headerObjects, long headerBytes) {
    this.interval = interval;
    this.headerObjects = headerObjects;
    this.headerBytes = headerBytes;
  }

  private static final Pattern COUNTS = Pattern.compile("^\\s*t\\*: (\\d+): (\\d+) \\[");

  static HeapDump read(Path dump) throws IOException {
    List<String> lines = Files.readAllLines(dump, StandardCharsets.ISO_8859_1);
    if (!lines.get(0).startsWith("heap_v2/")) {
      throw new AssertionError("not heap_v2: " + lines.get(0));
    }
    Matcher header = COUNTS.matcher(lines.get(1));
    if (!header.find()) {
      throw new AssertionError("no t* header: " + lines.get(1));
    }
    HeapDump d =
        new HeapDump(
            Long.parseLong(lines.get(0).substring("heap_v2/".length()).trim()),
            Long.parseLong(header.group(1)),
            Long.parseLong(header.group(2)));
    for (int i = 2; i < lines.size(); i++) {
      if (lines.get(i).startsWith("@ ")) {
        Matcher m = COUNTS.matcher(lines.get(i + 1));
        if (!m.find()) {
          throw new AssertionError("stack without t* line at " + (i + 2));
        }
        d.stacks.add(new long[] {Long.parseLong(m.group(1)), Long.parseLong(m.group(2))});
      }
    }
    return d;
  }

  /** jeprof's unbiasing of sampled heap_v2 counts (AdjustSamples), summed over all stacks. */
  double unbiasedBytes() {
    return stacks.stream().mapToDouble(s -> unbias(s[0], s[1])).sum();
  }

  /** The {@code t*} header line, unbiased the same way. */
  double unbiasedHeaderBytes() {
    return unbias(headerObjects, headerBytes);
  }

  private double unbias(long objects, long bytes) {
    if (objects == 0) {
      return 0;
    }
    double ratio = ((double) bytes / objects) / interval;
    return bytes / (1 - Math.exp(-ratio));
  }

  /** {@code jeprof --text <java> <dump>}; fails the test if jeprof fails. */
  static String jeprofText(Path dump) throws IOException, InterruptedException {
    Process p =
        new ProcessBuilder("jeprof", "--text", ForkedJvm.JAVA, dump.toString())
            .redirectErrorStream(false)
            .redirectError(ProcessBuilder.Redirect.DISCARD)
            .start();
    byte[] out = p.getInputStream().readAllBytes();
    if (!p.waitFor(120, TimeUnit.SECONDS) || p.exitValue() != 0) {
      throw new AssertionError("jeprof failed on " + dump);
    }
    return new String(out, StandardCharsets.UTF_8);
  }

  /** jeprof's {@code Total: X MB}, in MiB. */
  static double jeprofTotalMiB(String text) {
    Matcher m = Pattern.compile("Total: ([0-9.]+) MB").matcher(text);
    if (!m.find()) {
      throw new AssertionError("no Total in jeprof output:\n" + text);
    }
    return Double.parseDouble(m.group(1));
  }
}
