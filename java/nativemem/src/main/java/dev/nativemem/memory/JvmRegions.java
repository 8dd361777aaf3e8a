package dev.nativemem.memory;

import dev.nativemem.base.NativeMemoryException;
import dev.nativemem.internal.DiagnosticCommands;
import dev.nativemem.internal.Json;
import dev.nativemem.internal.NativeBridge;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Where the Java heap and the code cache are reserved, from {@code GC.heap_info} and {@code
 * Compiler.codecache}, and how much of them is resident. The reservations never move, so they are
 * read once; residency is counted per call ({@code mincore}, in the native library).
 */
final class JvmRegions {
  /** {@code [0x…, 0x…)}, {@code [0x…, 0x…, 0x…)} or {@code [0x…, 0x…, 0x…]}: first to last. */
  private static final Pattern RANGE =
      Pattern.compile(
          "\\[\\s*0x([0-9a-fA-F]+)(?:\\s*,\\s*0x[0-9a-fA-F]+)*\\s*,\\s*0x([0-9a-fA-F]+)[)\\]]");

  private static volatile List<long[]> heap;
  private static volatile List<long[]> codeCache;
  private static volatile long[] flatRanges;
  private static volatile String rangesRequest;

  private JvmRegions() {}

  /**
   * Resident bytes of the Java heap's reservation and of the code cache's, in one pass over the
   * mappings; either is null where its address range is not known (ZGC prints none for the heap; a
   * JVM without diagnostic commands prints neither) or part of it is not mapped.
   */
  static Long[] heapAndCodeCacheResidentBytes() {
    if (flatRanges().length == 0) {
      return new Long[2];
    }
    return split(Json.parseObject(NativeBridge.call("resident_ranges", rangesRequest())));
  }

  /**
   * The heap's ranges, then the code cache's, as flat {@code [start, end)} pairs: what the native
   * library is asked to count (the {@code resident_ranges} and {@code memory_snapshot} jobs).
   */
  private static long[] flatRanges() {
    long[] flat = flatRanges;
    if (flat == null) {
      List<long[]> all = new ArrayList<>(heapRanges());
      all.addAll(codeCacheRanges());
      flat = new long[2 * all.size()];
      for (int i = 0; i < all.size(); i++) {
        flat[2 * i] = all.get(i)[0];
        flat[2 * i + 1] = all.get(i)[1];
      }
      rangesRequest = rangesRequestOf(flat);
      flatRanges = flat;
    }
    return flat;
  }

  /** The request of {@link #flatRanges()}' pairs, written once with them. */
  static String rangesRequest() {
    if (rangesRequest == null) {
      flatRanges();
    }
    return rangesRequest;
  }

  /** The request {@code {ranges: [[start, end], ...]}} of {@code flat}'s pairs. */
  static String rangesRequestOf(long... flat) {
    List<List<Long>> pairs = new ArrayList<>(flat.length / 2);
    for (int i = 0; i + 1 < flat.length; i += 2) {
      pairs.add(List.of(flat[i], flat[i + 1]));
    }
    return Json.write(Map.of("ranges", pairs));
  }

  /**
   * The native answer for {@link #flatRanges()} ({@code resident_bytes}: one figure per range) as
   * {@code [heap, code cache]} totals; either null as {@link #heapAndCodeCacheResidentBytes()}
   * says.
   */
  static Long[] split(Map<String, Object> json) {
    List<?> residentBytes = residentBytes(json);
    int heapCount = heapRanges().size();
    int codeCount = codeCacheRanges().size();
    if (residentBytes.size() != heapCount + codeCount) {
      throw new NativeMemoryException(
          "the native library counted "
              + residentBytes.size()
              + " ranges of "
              + (heapCount + codeCount)
              + " asked about");
    }
    Long[] out = new Long[2];
    out[0] = heapCount == 0 ? null : sum(residentBytes.subList(0, heapCount));
    out[1] = codeCount == 0 ? null : sum(residentBytes.subList(heapCount, residentBytes.size()));
    return out;
  }

  /** The heap's reserved {@code [start, end)} ranges (one for most collectors; none for ZGC). */
  public static List<long[]> heapRanges() {
    if (heap == null) {
      heap = read("GC.heap_info");
    }
    return heap;
  }

  /** The code heaps' reserved {@code [start, end)} ranges. */
  public static List<long[]> codeCacheRanges() {
    if (codeCache == null) {
      codeCache = read("Compiler.codecache");
    }
    return codeCache;
  }

  private static List<long[]> read(String command) {
    if (!DiagnosticCommands.available()) {
      return Collections.emptyList();
    }
    return ranges(DiagnosticCommands.run(command));
  }

  /** Every address range in a diagnostic command's text, merged where they overlap. */
  static List<long[]> ranges(String text) {
    List<long[]> found = new ArrayList<>();
    Matcher m = RANGE.matcher(text);
    while (m.find()) {
      long start = Long.parseUnsignedLong(m.group(1), 16);
      long end = Long.parseUnsignedLong(m.group(2), 16);
      if (Long.compareUnsigned(start, end) < 0) {
        found.add(new long[] {start, end});
      }
    }
    found.sort((a, b) -> Long.compareUnsigned(a[0], b[0]));
    List<long[]> merged = new ArrayList<>();
    for (long[] range : found) {
      long[] last = merged.isEmpty() ? null : merged.get(merged.size() - 1);
      if (last != null && Long.compareUnsigned(range[0], last[1]) <= 0) {
        if (Long.compareUnsigned(range[1], last[1]) > 0) {
          last[1] = range[1];
        }
      } else {
        merged.add(range.clone());
      }
    }
    return Collections.unmodifiableList(merged);
  }

  /** The sum of the native {@code resident_ranges} job; null if part of a range is unmapped. */
  public static Long residentTotal(Map<String, Object> json) {
    return sum(residentBytes(json));
  }

  private static List<?> residentBytes(Map<String, Object> json) {
    Object list = json.get("resident_bytes");
    if (!(list instanceof List)) {
      throw new NativeMemoryException("native JSON lacks list 'resident_bytes': " + json);
    }
    return (List<?>) list;
  }

  private static Long sum(List<?> residentBytes) {
    long total = 0;
    for (Object bytes : residentBytes) {
      if (!(bytes instanceof Number)) {
        return null; // part of a range is not mapped: the text described something else
      }
      total += ((Number) bytes).longValue();
    }
    return total;
  }
}
