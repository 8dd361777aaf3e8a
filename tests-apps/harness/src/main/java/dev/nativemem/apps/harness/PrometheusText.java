package dev.nativemem.apps.harness;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

/** Samples of Prometheus's text exposition format (what a scrape returns). */
public record PrometheusText(List<PrometheusText.Sample> samples) {
  /** One line: series name, labels, value. */
  public record Sample(String name, Map<String, String> labels, double value) {}

  private static final Pattern LINE =
      Pattern.compile("^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\\{(.*)\\})?\\s+(\\S+)(?:\\s+\\d+)?$");
  private static final Pattern LABEL =
      Pattern.compile("([a-zA-Z_][a-zA-Z0-9_]*)=\"((?:[^\"\\\\]|\\\\.)*)\"");

  public static PrometheusText parse(String text) {
    List<Sample> samples = new ArrayList<>();
    for (String line : text.split("\n")) {
      if (line.isBlank() || line.startsWith("#")) {
        continue;
      }
      Matcher m = LINE.matcher(line.strip());
      if (!m.matches()) {
        throw new IllegalArgumentException("not a sample line: " + line);
      }
      Map<String, String> labels = new TreeMap<>();
      if (m.group(2) != null) {
        Matcher l = LABEL.matcher(m.group(2));
        while (l.find()) {
          labels.put(l.group(1), l.group(2));
        }
      }
      samples.add(new Sample(m.group(1), labels, Double.parseDouble(m.group(3))));
    }
    return new PrometheusText(samples);
  }

  /** The series names starting with {@code prefix}. */
  public Set<String> names(String prefix) {
    return samples.stream()
        .map(Sample::name)
        .filter(n -> n.startsWith(prefix))
        .collect(Collectors.toCollection(java.util.TreeSet::new));
  }

  /** The one sample of {@code name}. */
  public Sample only(String name) {
    return only(name, Map.of());
  }

  /** The one sample of {@code name} whose labels include {@code labels}. */
  public Sample only(String name, Map<String, String> labels) {
    List<Sample> found =
        samples.stream()
            .filter(s -> s.name().equals(name))
            .filter(s -> s.labels().entrySet().containsAll(labels.entrySet()))
            .toList();
    if (found.size() != 1) {
      throw new AssertionError(name + ": " + found.size() + " samples: " + found);
    }
    return found.get(0);
  }
}
