package dev.nativemem.incident;

import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The timeline as an inline SVG line chart: one path per series (a gap where a sample lacks the
 * value), a byte axis in one binary unit and a UTC time axis. Only numbers from the bundle reach
 * the SVG, each formatted by us.
 */
final class TimelineChart {
  /** The series drawn: timeline key, legend label, colour, dashed. */
  static final String[][] SERIES = {
    {"limit", "limit", "#c0392b", "dash"},
    {"usage", "cgroup usage", "#e67e22", ""},
    {"rss", "RSS", "#2c3e50", ""},
    {"allocator_allocated", "allocator allocated", "#27ae60", ""},
    {"heap_used", "Java heap used", "#2980b9", ""},
  };

  private static final int WIDTH = 960;
  private static final int HEIGHT = 320;
  private static final int LEFT = 80;
  private static final int RIGHT = 20;
  private static final int TOP = 16;
  private static final int BOTTOM = 48;
  private static final int TICKS = 5;
  static final int MAX_POINTS = 2000;
  private static final String[] UNITS = {"B", "KiB", "MiB", "GiB", "TiB"};

  private TimelineChart() {}

  /** The chart, or null when fewer than two samples carry a time. */
  static String render(List<Map<String, Object>> samples) {
    List<Map<String, Object>> timed = new ArrayList<>();
    // At most MAX_POINTS points a series: every n-th sample, and the last.
    int stride = Math.max(1, (samples.size() + MAX_POINTS - 1) / MAX_POINTS);
    for (int i = 0; i < samples.size(); i++) {
      Map<String, Object> s = samples.get(i);
      if ((i % stride == 0 || i == samples.size() - 1) && Fields.whole(s, "t") != null) {
        timed.add(s);
      }
    }
    if (timed.size() < 2) {
      return null;
    }
    long t0 = Fields.whole(timed.get(0), "t");
    long t1 = Fields.whole(timed.get(timed.size() - 1), "t");
    double max = 0;
    for (Map<String, Object> s : timed) {
      for (String[] series : SERIES) {
        Double v = Fields.number(s, series[0]);
        if (v != null) {
          max = Math.max(max, v);
        }
      }
    }
    int unit = 0;
    while (unit < UNITS.length - 1 && max >= 1024.0 * Math.pow(1024, unit)) {
      unit++;
    }
    double scale = Math.pow(1024, unit);
    double top = niceCeiling(Math.max(max / scale, 1)) * scale;
    long span = Math.max(t1 - t0, 1);
    int plotW = WIDTH - LEFT - RIGHT;
    int plotH = HEIGHT - TOP - BOTTOM;

    StringBuilder svg = new StringBuilder(16 * 1024);
    svg.append(
            String.format(
                Locale.ROOT,
                "<svg id=\"timeline-chart\" xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 %d"
                    + " %d\" width=\"%d\" height=\"%d\" role=\"img\" aria-label=\"memory over"
                    + " time\">",
                WIDTH,
                HEIGHT,
                WIDTH,
                HEIGHT))
        .append("<rect x=\"0\" y=\"0\" width=\"100%\" height=\"100%\" fill=\"#fff\"/>");
    for (int i = 0; i <= TICKS; i++) {
      double value = top * i / TICKS;
      double y = TOP + plotH - plotH * (double) i / TICKS;
      svg.append(
          String.format(
              Locale.ROOT,
              "<line class=\"grid\" x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\"/>"
                  + "<text class=\"tick\" x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%s %s</text>",
              LEFT,
              y,
              WIDTH - RIGHT,
              y,
              LEFT - 6,
              y + 4,
              trim(value / scale),
              UNITS[unit]));
      long t = t0 + span * i / TICKS;
      double x = LEFT + plotW * (double) i / TICKS;
      svg.append(
          String.format(
              Locale.ROOT,
              "<text class=\"tick\" x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%s</text>",
              x,
              HEIGHT - BOTTOM + 18,
              clock(t, span < TICKS * 10_000L)));
    }
    svg.append(
        String.format(
            Locale.ROOT,
            "<text class=\"axis\" x=\"%d\" y=\"%d\" text-anchor=\"middle\">time (UTC, %s)</text>",
            LEFT + plotW / 2,
            HEIGHT - 8,
            DateTimeFormatter.ISO_LOCAL_DATE.format(Instant.ofEpochMilli(t0).atOffset(UTC))));
    svg.append(
        String.format(
            Locale.ROOT,
            "<line class=\"frame\" x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\"/>",
            LEFT,
            TOP + plotH,
            WIDTH - RIGHT,
            TOP + plotH));
    for (String[] series : SERIES) {
      StringBuilder d = new StringBuilder();
      boolean pen = false;
      for (Map<String, Object> s : timed) {
        Double v = Fields.number(s, series[0]);
        if (v == null) {
          pen = false;
          continue;
        }
        double x = LEFT + plotW * (Fields.whole(s, "t") - t0) / (double) span;
        double y = TOP + plotH - plotH * Math.max(0, Math.min(v / top, 1));
        d.append(pen ? " L" : " M").append(String.format(Locale.ROOT, "%.1f %.1f", x, y));
        pen = true;
      }
      if (d.length() > 0) {
        svg.append(
            String.format(
                Locale.ROOT,
                "<path class=\"series\" data-series=\"%s\" d=\"%s\" stroke=\"%s\"%s><title>%s</title>"
                    + "</path>",
                series[0],
                d.toString().trim(),
                series[2],
                series[3].isEmpty() ? "" : " stroke-dasharray=\"6 4\"",
                series[1]));
      }
    }
    svg.append("</svg>");
    return svg.toString();
  }

  /** The legend: each series with its colour, and whether the timeline had it at all. */
  static String legend(List<Map<String, Object>> samples) {
    StringBuilder legend = new StringBuilder("<ul class=\"legend\">");
    for (String[] series : SERIES) {
      boolean present = false;
      for (Map<String, Object> s : samples) {
        present |= Fields.number(s, series[0]) != null;
      }
      legend
          .append("<li><span class=\"swatch\" style=\"background:")
          .append(series[2])
          .append("\"></span>")
          .append(series[1])
          .append(present ? "" : " (not sampled)")
          .append("</li>");
    }
    return legend.append("</ul>").toString();
  }

  private static final ZoneOffset UTC = ZoneOffset.UTC;

  /** The time of day in UTC; with tenths of a second for timelines too short for whole ones. */
  static String clock(long epochMillis, boolean tenths) {
    return DateTimeFormatter.ofPattern(tenths ? "HH:mm:ss.S" : "HH:mm:ss", Locale.ROOT)
        .format(Instant.ofEpochMilli(epochMillis).atOffset(UTC));
  }

  /** 1, 2, 2.5, 5 or 10 times a power of ten, at least {@code value}. */
  static double niceCeiling(double value) {
    double power = Math.pow(10, Math.floor(Math.log10(value)));
    for (double step : new double[] {1, 2, 2.5, 5, 10}) {
      if (step * power >= value) {
        return step * power;
      }
    }
    return 10 * power;
  }

  private static String trim(double value) {
    return value == Math.rint(value)
        ? Long.toString((long) value)
        : String.format(Locale.ROOT, "%.1f", value);
  }
}
