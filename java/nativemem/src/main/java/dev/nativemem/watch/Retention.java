package dev.nativemem.watch;

import dev.nativemem.internal.FileOwnership;
import dev.nativemem.internal.FileTrees;
import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.FileTime;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Keeps the watch directory bounded: only directories named as our bundles, owned by this user and
 * not links, are counted and removed, oldest first (by the UTC stamp in their name); anything else
 * there, planted or not, is never touched. Temporary bundles left by a process killed while writing
 * are removed once that process is gone.
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

  /** Our bundles in {@code dir}, oldest first. */
  static List<Path> bundles(Path dir) throws IOException {
    List<Path> bundles = new ArrayList<>();
    try (DirectoryStream<Path> entries = Files.newDirectoryStream(dir)) {
      for (Path entry : entries) {
        if (BUNDLE.matcher(entry.getFileName().toString()).matches() && ours(entry)) {
          bundles.add(entry);
        }
      }
    }
    bundles.sort(Comparator.comparing(Retention::stamp).thenComparing(Path::toString));
    return bundles;
  }

  /** This process's newest bundle in {@code dir}, or null. */
  static Path newestOf(Path dir, long pid) throws IOException {
    Path newest = null;
    for (Path bundle : bundles(dir)) {
      Matcher m = BUNDLE.matcher(bundle.getFileName().toString());
      if (m.matches() && Long.parseLong(m.group(1)) == pid) {
        newest = bundle;
      }
    }
    return newest;
  }

  /**
   * Removes the oldest of our bundles until at most {@code keep} remain and they take at most
   * {@code maxBytes}; {@code newest} always stays. Returns what was removed.
   */
  static List<Path> prune(Path dir, int keep, long maxBytes, Path newest) throws IOException {
    removeStaleTemps(dir);
    List<Path> bundles = bundles(dir);
    long[] sizes = new long[bundles.size()];
    long total = 0;
    for (int i = 0; i < bundles.size(); i++) {
      sizes[i] = size(bundles.get(i));
      total += sizes[i];
    }
    List<Path> removed = new ArrayList<>();
    int count = bundles.size();
    for (int i = 0; i < bundles.size() && (count > keep || total > maxBytes); i++) {
      Path bundle = bundles.get(i);
      if (bundle.equals(newest)) {
        continue;
      }
      FileTrees.deleteQuietly(bundle);
      removed.add(bundle);
      count--;
      total -= sizes[i];
    }
    return removed;
  }

  private static void removeStaleTemps(Path dir) throws IOException {
    Instant staleBefore = Instant.now().minus(STALE_TEMP);
    try (DirectoryStream<Path> entries = Files.newDirectoryStream(dir)) {
      for (Path entry : entries) {
        Matcher m = TEMP.matcher(entry.getFileName().toString());
        if (!m.matches() || !ours(entry)) {
          continue;
        }
        long pid = Long.parseLong(m.group(1));
        boolean alive = ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false);
        FileTime modified = Files.getLastModifiedTime(entry, LinkOption.NOFOLLOW_LINKS);
        if (!alive && modified.toInstant().isBefore(staleBefore)) {
          FileTrees.deleteQuietly(entry);
        }
      }
    }
  }

  private static boolean ours(Path entry) {
    return Files.isDirectory(entry, LinkOption.NOFOLLOW_LINKS) && FileOwnership.isOwn(entry);
  }

  private static String stamp(Path bundle) {
    Matcher m = BUNDLE.matcher(bundle.getFileName().toString());
    return m.matches() ? m.group(2) : "";
  }

  /** Bytes of the regular files under {@code bundle}; links are not followed. */
  static long size(Path bundle) throws IOException {
    long[] total = {0};
    Files.walkFileTree(
        bundle,
        new SimpleFileVisitor<Path>() {
          @Override
          public FileVisitResult visitFile(Path file, BasicFileAttributes attributes) {
            if (attributes.isRegularFile()) {
              total[0] += attributes.size();
            }
            return FileVisitResult.CONTINUE;
          }

          @Override
          public FileVisitResult visitFileFailed(Path file, IOException e) {
            return FileVisitResult.CONTINUE;
          }
        });
    return total[0];
  }
}
