package dev.nativemem.watch;

import dev.nativemem.internal.DirectoryHandle;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Keeps the watch directory bounded, through its handle: only directories of this user (not links,
 * as {@code fstatat} without following links sees them) named as our bundles are counted and
 * removed, oldest first (by the UTC stamp in their name), and the removal itself descends only into
 * directories of ours opened without following links ({@link DirectoryHandle#removeTree}); anything
 * else there, planted or not, is never touched. Temporary bundles left by a process killed while
 * writing are removed once that process is gone.
 */
final class Retention {
  static final Pattern BUNDLE =
      Pattern.compile(
          Pattern.quote(IncidentBundle.PREFIX)
              + "(\\d+)-(\\d{8}T\\d{6}Z)-(limit|growth|leaked-handles|on-demand)");
  static final Pattern TEMP =
      Pattern.compile(Pattern.quote(IncidentBundle.TEMP_PREFIX) + "(\\d+)-.*\\.tmp-[0-9a-f]+");

  /** A temporary bundle this old whose process is gone is a leftover. */
  static final Duration STALE_TEMP = Duration.ofMinutes(10);

  private Retention() {}

  /** The names of our bundles in {@code dir}, oldest first. */
  static List<String> bundles(DirectoryHandle dir) {
    List<String> bundles = new ArrayList<>();
    for (DirectoryHandle.Entry entry : dir.list()) {
      if (entry.isOwnDirectory() && BUNDLE.matcher(entry.name()).matches()) {
        bundles.add(entry.name());
      }
    }
    bundles.sort(Comparator.comparing(Retention::stamp).thenComparing(Comparator.naturalOrder()));
    return bundles;
  }

  /** The name of this process's newest bundle in {@code dir}, or null. */
  static String newestOf(DirectoryHandle dir, long pid) {
    String newest = null;
    for (String bundle : bundles(dir)) {
      Matcher m = BUNDLE.matcher(bundle);
      if (m.matches() && Long.parseLong(m.group(1)) == pid) {
        newest = bundle;
      }
    }
    return newest;
  }

  /**
   * Removes the oldest of our bundles until at most {@code keep} remain and they take at most
   * {@code maxBytes}; {@code newest} always stays. Returns the names removed.
   */
  static List<String> prune(DirectoryHandle dir, int keep, long maxBytes, String newest) {
    removeStaleTemps(dir);
    List<String> bundles = bundles(dir);
    long[] sizes = new long[bundles.size()];
    long total = 0;
    for (int i = 0; i < bundles.size(); i++) {
      sizes[i] = size(dir, bundles.get(i));
      total += sizes[i];
    }
    List<String> removed = new ArrayList<>();
    int count = bundles.size();
    for (int i = 0; i < bundles.size() && (count > keep || total > maxBytes); i++) {
      String bundle = bundles.get(i);
      if (bundle.equals(newest)) {
        continue;
      }
      dir.removeTree(bundle);
      removed.add(bundle);
      count--;
      total -= sizes[i];
    }
    return removed;
  }

  /**
   * Removes our oldest bundles until the volume has {@code wantedFreeBytes} free or only the newest
   * is left. Returns the names removed.
   */
  static List<String> makeRoom(DirectoryHandle dir, long wantedFreeBytes) {
    List<String> removed = new ArrayList<>();
    if (dir.freeBytes() >= wantedFreeBytes) {
      return removed;
    }
    removeStaleTemps(dir);
    List<String> bundles = bundles(dir);
    for (String bundle : bundles.subList(0, Math.max(0, bundles.size() - 1))) {
      if (dir.freeBytes() >= wantedFreeBytes) {
        break;
      }
      dir.removeTree(bundle);
      removed.add(bundle);
    }
    return removed;
  }

  private static void removeStaleTemps(DirectoryHandle dir) {
    Instant staleBefore = Instant.now().minus(STALE_TEMP);
    for (DirectoryHandle.Entry entry : dir.list()) {
      Matcher m = TEMP.matcher(entry.name());
      if (!m.matches() || !entry.isOwnDirectory()) {
        continue;
      }
      long pid = Long.parseLong(m.group(1));
      boolean alive = ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false);
      if (!alive && Instant.ofEpochMilli(entry.modifiedMillis()).isBefore(staleBefore)) {
        dir.removeTree(entry.name());
      }
    }
  }

  /**
   * The UTC stamp in a bundle's name ({@code 20261207T031135Z}), which orders bundles by capture.
   */
  static String stamp(String bundle) {
    Matcher m = BUNDLE.matcher(bundle);
    return m.matches() ? m.group(2) : "";
  }

  /** Bytes of the regular files under {@code bundle}; links are not followed. */
  static long size(DirectoryHandle dir, String bundle) {
    return dir.treeBytes(bundle);
  }
}
