package dev.nativemem.tests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.awt.image.BufferedImage;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.imageio.ImageIO;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The flame graph of Inflaters planted from known Java lines with Java frames on: its title gives
 * the total and the interval, the line under it names the heaviest native frame (zlib's {@code
 * inflateInit2_}) and the application's line that reached it, frames are coloured by kind with a
 * legend, and headless Chromium draws it so.
 */
class FlameGraphTest {
  private static final long INTERVAL = 32 * 1024;
  private static final String JAVA = "rgb(95,185,75)";
  private static final String ZLIB = "rgb(105,155,225)";

  private static Path dir;
  private static Path svg;
  private static String drawn;

  @BeforeAll
  static void drawPlantedSites() throws Exception {
    HeapProfilingTest.extractPreloadAllocator();
    dir = HeapProfilingTest.freshDir("flame-graph");
    Path dump = dir.resolve("sites.heap");
    ForkedJvm.Result r =
        HeapProfilingTest.jvm(HeapProfilingTest.Allocator.OURS)
            .main(
                JavaFramesChild.class.getName(),
                "sites",
                dump.toString(),
                Long.toString(INTERVAL),
                "2000");
    assertEquals(0, r.exitCode, r.toString());
    svg = dir.resolve("sites.svg");
    ForkedJvm.Result written =
        new ForkedJvm().cli("analyze", dump.toString(), "--format", "svg", "-o", svg.toString());
    assertEquals(0, written.exitCode, written.toString());
    drawn = Files.readString(svg);
  }

  /** The fill of the frame whose tooltip starts with {@code name}. */
  private static String fill(String name) {
    Matcher m =
        Pattern.compile(
                "<title>" + Pattern.quote(name) + "[^<]*</title><rect [^>]*fill=\"([^\"]+)\"")
            .matcher(drawn);
    assertTrue(m.find(), "no frame " + name);
    return m.group(1);
  }

  @Test
  void titleSummaryLegendAndColoursSayWhatIsDrawn() {
    assertTrue(
        drawn.matches(
            "(?s).*<text id=\"title\"[^>]*>In-use heap: sites.heap: \\d+\\.\\d MiB in use, one"
                + " sample per 32.0 KiB on average</text>.*"),
        "title");
    Matcher summary = Pattern.compile("<text id=\"subtitle\"[^>]*>([^<]*)</text>").matcher(drawn);
    assertTrue(summary.find(), "no line under the title");
    String line = summary.group(1);
    assertTrue(line.startsWith("Heaviest native frame: inflateInit2_, "), line);
    // The application's line, not the JDK's Inflater.<init>.
    assertTrue(line.contains("reached from JavaFramesChild."), line);
    assertTrue(line.contains("(JavaFramesChild.java:"), line);
    for (String kind : new String[] {"Java", "JNI library", "JVM", "libc/zlib", "allocator"}) {
      assertTrue(drawn.contains(">" + kind + "</text>"), "legend entry " + kind);
    }
    assertEquals(ZLIB, fill("inflateInit2_"));
    assertEquals(JAVA, fill("java.util.zip.Inflater.&lt;init&gt;"));
    assertEquals(JAVA, fill("dev.nativemem.tests.JavaFramesChild.plantCompiled"));
  }

  @Test
  void chromiumDrawsTheLegendAndTheColouredFrames() throws Exception {
    Assumptions.assumeTrue(Chromium.installed(), Chromium.MISSING);
    Path profile = Files.createTempDirectory(dir, "chromium-");
    String dom = Chromium.run(dir, profile, "--dump-dom", svg.toUri().toString());
    assertTrue(dom.contains("<g id=\"legend\">"), dom.substring(0, Math.min(dom.length(), 2000)));
    assertTrue(dom.contains("Heaviest native frame: inflateInit2_"), "summary in the DOM");

    Path png = dir.resolve("sites.png");
    Chromium.run(
        dir, profile, "--screenshot=" + png, "--window-size=1200,1600", svg.toUri().toString());
    BufferedImage image = ImageIO.read(png.toFile());
    long java = 0;
    long zlib = 0;
    for (int y = 0; y < image.getHeight(); y++) {
      for (int x = 0; x < image.getWidth(); x++) {
        int rgb = image.getRGB(x, y) & 0xffffff;
        java += rgb == 0x5fb94b ? 1 : 0;
        zlib += rgb == 0x699be1 ? 1 : 0;
      }
    }
    // Whole frames of both kinds, not only the legend's 12x12 swatches.
    assertTrue(java > 2000, java + " Java-green pixels");
    assertTrue(zlib > 2000, zlib + " zlib-blue pixels");
  }
}
