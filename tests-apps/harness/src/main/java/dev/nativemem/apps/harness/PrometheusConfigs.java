package dev.nativemem.apps.harness;

import java.io.IOException;
import java.io.Reader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.yaml.snakeyaml.Yaml;

/** The Prometheus files of {@code docs/}, read as Prometheus reads them. */
public final class PrometheusConfigs {
  /** The project's {@code docs/} (set by the build for every tests-apps module). */
  public static final Path DOCS = Paths.get(System.getProperty("nativemem.docs", "../../docs"));

  private static final Pattern SERIES = Pattern.compile("\\bnativemem_[a-z0-9_]+");
  private static final Pattern PROMQL = Pattern.compile("```promql\n(.*?)```", Pattern.DOTALL);

  private PrometheusConfigs() {}

  /** Every {@code nativemem_*} series an {@code expr} of a rules file names. */
  public static Set<String> seriesInRules(Path rulesFile) throws IOException {
    Set<String> series = new TreeSet<>();
    for (Map<String, Object> group : list(load(rulesFile), "groups")) {
      for (Map<String, Object> rule : list(group, "rules")) {
        series.addAll(seriesIn((String) rule.get("expr")));
      }
    }
    return series;
  }

  /** Every {@code nativemem_*} series named in {@code text}. */
  public static Set<String> seriesIn(String text) {
    Set<String> series = new TreeSet<>();
    Matcher m = SERIES.matcher(text);
    while (m.find()) {
      series.add(m.group());
    }
    return series;
  }

  /** Every {@code nativemem_*} series the {@code ```promql} blocks of a Markdown file name. */
  public static Set<String> seriesInQueries(Path markdown) throws IOException {
    Set<String> series = new TreeSet<>();
    Matcher block = PROMQL.matcher(Files.readString(markdown));
    while (block.find()) {
      series.addAll(seriesIn(block.group(1)));
    }
    return series;
  }

  /**
   * The scrape's samples renamed by a {@code metric_relabel_configs} list (the {@code replace}
   * action on {@code __name__}, regular expressions anchored at both ends, as Prometheus applies
   * them in order).
   */
  public static PrometheusText relabel(PrometheusText scrape, Path relabelFile) throws IOException {
    Map<String, Object> file = load(relabelFile);
    List<PrometheusText.Sample> renamed = new ArrayList<>();
    for (PrometheusText.Sample sample : scrape.samples()) {
      String name = sample.name();
      for (Map<String, Object> step : list(file, "metric_relabel_configs")) {
        if (!List.of("__name__").equals(step.get("source_labels"))
            || !"__name__".equals(step.get("target_label"))
            || !"replace".equals(step.getOrDefault("action", "replace"))) {
          throw new IllegalArgumentException("only __name__ replacements are read here: " + step);
        }
        Matcher m = Pattern.compile("^(?:" + step.get("regex") + ")$").matcher(name);
        if (m.matches()) {
          name =
              m.replaceFirst(
                  ((String) step.get("replacement")).replace("${", "$").replace("}", ""));
        }
      }
      renamed.add(new PrometheusText.Sample(name, sample.labels(), sample.value()));
    }
    return new PrometheusText(renamed);
  }

  /** A YAML file as maps and lists. */
  public static Map<String, Object> load(Path file) throws IOException {
    try (Reader reader = Files.newBufferedReader(file)) {
      return new Yaml().load(reader);
    }
  }

  @SuppressWarnings("unchecked")
  private static List<Map<String, Object>> list(Map<String, Object> map, String key) {
    return (List<Map<String, Object>>) map.get(key);
  }
}
