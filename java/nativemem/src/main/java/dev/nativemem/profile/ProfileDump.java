package dev.nativemem.profile;

import dev.nativemem.base.Setting;
import dev.nativemem.internal.FileTrees;
import dev.nativemem.internal.Json;
import dev.nativemem.internal.NativeBridge;
import dev.nativemem.internal.NativeLibraryLoader;
import dev.nativemem.profile.sampling.SamplingStatus;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/** Writes heap profiles with their symbols sidecar; one dump at a time in this class loader. */
final class ProfileDump {
  private static final int DEFAULT_KEEP = Integer.parseInt(Setting.PROFILE_KEEP.defaultValue());

  private static final DateTimeFormatter STAMP =
      DateTimeFormatter.ofPattern("yyyyMMdd'T'HHmmss.SSS'Z'", Locale.ROOT);
  private static final Object LOCK = new Object();

  private ProfileDump() {}

  /** {@link Setting#PROFILE_KEEP}; a value that is no number keeps the default. */
  private static int keep() {
    try {
      return Integer.decode(Setting.PROFILE_KEEP.value());
    } catch (NumberFormatException e) {
      return DEFAULT_KEEP;
    }
  }

  /** {@code <dir>/nativemem-<pid>-<UTC time>.heap}. */
  private static Path defaultTarget() {
    String configured = Setting.PROFILE_DIR.value();
    String dir = configured != null ? configured : System.getProperty("java.io.tmpdir");
    String name =
        "nativemem-"
            + ProcessHandle.current().pid()
            + "-"
            + STAMP.format(ZonedDateTime.now(ZoneOffset.UTC))
            + ".heap";
    return Paths.get(dir, name);
  }

  /**
   * Dumps to the default target, then removes the oldest default-named dumps (and their {@code
   * .symbols/} sidecars) beyond {@code -Dnativemem.profile.keep}, so periodic dumps stay bounded.
   * Only dumps this user owns are counted or removed; files with any other name, or of any other
   * owner, are never touched (the native job's pruning: {@code rust/nativemem/src/jobs/}).
   */
  static HeapProfile writeDefault() {
    return write(defaultTarget(), keep());
  }

  /** Dumps to {@code target}, which must not exist; returns the profile in place. */
  static HeapProfile write(Path target) {
    return write(target, null);
  }

  /**
   * Dumps to {@code target} in one native call, which also prunes beside it when {@code keep} is
   * not null; the lock makes it one dump at a time, the perf map the JVM writes included.
   */
  private static HeapProfile write(Path target, Integer keep) {
    NativeLibraryLoader.load();
    synchronized (LOCK) {
      // Fail before the perf map is written if profiling cannot run at all.
      SamplingStatus.read().requireAvailable();
      Path perfMap = PerfMap.writeTemp();
      try {
        // Objects there vanish with the process: ours, and JNI libraries extracted to tmp.
        Path tmp = Paths.get(System.getProperty("java.io.tmpdir")).toAbsolutePath();
        List<String> saveFrom = new ArrayList<>();
        saveFrom.add(NativeLibraryLoader.loadedPath().getParent().toString());
        if (tmp.getNameCount() > 0) {
          // A temp dir of "/" would save every library of the process.
          saveFrom.add(tmp.toString());
        }
        Map<String, Object> request = new LinkedHashMap<>();
        request.put("target", target.toString());
        request.put("save_from", saveFrom);
        request.put("perf_map", perfMap == null ? null : perfMap.toString());
        request.put("keep", keep);
        String dumped = NativeBridge.call("heap_dump", request);
        return HeapProfile.dumped(Json.parseObject(dumped));
      } finally {
        if (perfMap != null) {
          FileTrees.deleteQuietly(perfMap.getParent());
        }
      }
    }
  }
}
