import java.io.BufferedReader;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeSet;

/**
 * Sums the bytes a collapsed-stacks file attributes to given Java methods (bench/
 * profiler-findings.sh; not a test). Reads both dialects the benchmark compares: nativemem's {@code
 * analyze --format collapsed} ({@code pkg.Class.method(File.java:53)}) and async-profiler's {@code
 * jfrconv -o collapsed --lines} ({@code pkg/Class.method:53_[j]}). A line is {@code frame;frame;...
 * value}; the value follows the last space (a frame may hold spaces, as in {@code [Java frames
 * unavailable: gc]}).
 *
 * <p>{@code java bench/CollapsedSites.java FILE Class.method...} prints, per method, {@code SITE
 * <method> <sum of the values of the stacks with a frame of it> <those stacks> <its lines seen,
 * comma-joined or ->}; a stack is counted once per method, however often the method recurs in it.
 */
public final class CollapsedSites {
  private static final long MAX_LINE = 1 << 20; // a longer line is not collapsed stacks

  public static void main(String[] args) throws IOException {
    if (args.length < 2) {
      System.err.println("usage: java bench/CollapsedSites.java FILE Class.method...");
      System.exit(2);
    }
    int sites = args.length - 1;
    long[] bytes = new long[sites];
    long[] stacks = new long[sites];
    List<TreeSet<Integer>> lines = new ArrayList<>();
    for (int s = 0; s < sites; s++) {
      lines.add(new TreeSet<>());
    }
    try (BufferedReader in = Files.newBufferedReader(Paths.get(args[0]), StandardCharsets.UTF_8)) {
      String line;
      long number = 0;
      while ((line = in.readLine()) != null) {
        number++;
        if (line.isEmpty()) {
          continue;
        }
        int space = line.lastIndexOf(' ');
        if (space <= 0 || line.length() > MAX_LINE) {
          throw new IllegalArgumentException(
              args[0] + ":" + number + ": not 'frame;frame;... value'");
        }
        long value;
        try {
          value = Long.parseLong(line.substring(space + 1));
        } catch (NumberFormatException e) {
          throw new IllegalArgumentException(args[0] + ":" + number + ": no integer value", e);
        }
        boolean[] seen = new boolean[sites];
        for (String frame : line.substring(0, space).split(";")) {
          String name = normalize(frame);
          for (int s = 0; s < sites; s++) {
            String method = args[s + 1];
            if (name.startsWith(method)
                && (name.length() == method.length()
                    || name.charAt(method.length()) == '('
                    || name.charAt(method.length()) == ':')) {
              int at = lineOf(name, method.length());
              if (at > 0) {
                lines.get(s).add(at);
              }
              if (!seen[s]) {
                seen[s] = true;
                bytes[s] += value;
                stacks[s]++;
              }
            }
          }
        }
      }
    }
    for (int s = 0; s < sites; s++) {
      String seenLines = lines.get(s).isEmpty() ? "-" : join(lines.get(s));
      System.out.println(
          "SITE " + args[s + 1] + " " + bytes[s] + " " + stacks[s] + " " + seenLines);
    }
  }

  /** Dots for slashes, and async-profiler's frame-type suffix ({@code _[j]}, {@code _[0]}) cut. */
  static String normalize(String frame) {
    String f = frame.replace('/', '.');
    if (f.length() > 4 && f.charAt(f.length() - 1) == ']' && f.charAt(f.length() - 4) == '_') {
      f = f.substring(0, f.length() - 4);
    }
    return f;
  }

  /** The line number after the method name: {@code (File.java:53)} or {@code :53}; 0 if none. */
  static int lineOf(String name, int from) {
    int colon = name.lastIndexOf(':');
    if (colon < from) {
      return 0;
    }
    int end = colon + 1;
    while (end < name.length() && Character.isDigit(name.charAt(end))) {
      end++;
    }
    return end > colon + 1 ? Integer.parseInt(name.substring(colon + 1, end)) : 0;
  }

  private static String join(TreeSet<Integer> numbers) {
    StringBuilder b = new StringBuilder();
    for (int n : numbers) {
      b.append(b.length() == 0 ? "" : ",").append(n);
    }
    return b.toString();
  }
}
