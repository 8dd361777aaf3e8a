package dev.nativemem.internal;

import dev.nativemem.HeapProfile;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.util.Locale;
import java.util.Map;

/** Writes heap profiles with their symbols sidecar; one dump at a time in this class loader. */
public final class ProfileDump {
  /** Where {@code dumpProfile()} writes when no path is given; default {@code java.io.tmpdir}. */
  public static final String DIRECTORY_PROPERTY = "nativemem.profile.dir";

  private static final DateTimeFormatter STAMP =
      DateTimeFormatter.ofPattern("yyyyMMdd'T'HHmmss.SSS'Z'", Locale.ROOT);
  private static final Object LOCK = new Object();

  private ProfileDump() {}

  /** {@code <dir>/nativemem-<pid>-<UTC time>.heap}. */
  public static Path defaultTarget() {
    String dir = System.getProperty(DIRECTORY_PROPERTY, System.getProperty("java.io.tmpdir"));
    String name =
        "nativemem-"
            + ProcessHandle.current().pid()
            + "-"
            + STAMP.format(ZonedDateTime.now(ZoneOffset.UTC))
            + ".heap";
    return Paths.get(dir, name);
  }

  /** Dumps to {@code target}, which must not exist; returns the profile in place. */
  public static HeapProfile write(Path target) {
    NativeLibraryLoader.load();
    synchronized (LOCK) {
      // Fail before the perf map is written if profiling cannot run at all.
      Map<String, Object> status = Json.parseObject(NativeBridge.samplingStatusJson());
      if (!Boolean.TRUE.equals(status.get("available"))) {
        throw new dev.nativemem.ProfilingUnavailableException(
            String.valueOf(status.get("unavailable_reason")));
      }
      Path perfMap = PerfMap.writeTemp();
      try {
        // Objects there vanish with the process: ours, and JNI libraries extracted to tmp.
        Path tmp = Paths.get(System.getProperty("java.io.tmpdir")).toAbsolutePath();
        String saveFrom =
            NativeLibraryLoader.loadedPath().getParent()
                // A temp dir of "/" would save every library of the process.
                + (tmp.getNameCount() > 0 ? "\n" + tmp : "");
        Map<String, Object> dumped =
            Json.parseObject(
                NativeBridge.dumpProfileJson(
                    target.toString(), saveFrom, perfMap == null ? null : perfMap.toString()));
        return HeapProfile.open(Paths.get(Json.string(dumped, "path")));
      } finally {
        if (perfMap != null) {
          PerfMap.deleteQuietly(perfMap);
        }
      }
    }
  }
}
