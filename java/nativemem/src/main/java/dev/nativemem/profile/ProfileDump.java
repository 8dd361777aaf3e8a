package dev.nativemem.profile;

import dev.nativemem.base.Setting;
import dev.nativemem.internal.DirectoryHandle;
import dev.nativemem.internal.FileOwnership;
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
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Pattern;

/** Writes heap profiles with their symbols sidecar; one dump at a time in this class loader. */
final class ProfileDump {
  private static final int DEFAULT_KEEP = Integer.parseInt(Setting.PROFILE_KEEP.defaultValue());
  private static final Pattern DEFAULT_NAME =
      Pattern.compile("nativemem-\\d+-\\d{8}T\\d{6}\\.\\d{3}Z\\.heap");

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
   * owner, are never touched.
   */
  static HeapProfile writeDefault() {
    HeapProfile profile = write(defaultTarget());
    prune(profile.path(), keep());
    return profile;
  }

  /**
   * Keeps the {@code keep} newest default-named dumps of this user beside {@code justWritten},
   * which always stays; best effort, through one handle of the directory (listed and removed
   * relative to it, nothing followed through a link). In a shared directory (the default, {@code
   * java.io.tmpdir}) another user can plant files with any name and time stamp: they are not ours,
   * so they neither count nor get deleted.
   */
  static void prune(Path justWritten, int keep) {
    Path dir = justWritten.toAbsolutePath().getParent();
    String written = String.valueOf(justWritten.getFileName());
    try (DirectoryHandle handle = DirectoryHandle.open(dir)) {
      int me = FileOwnership.processUid();
      List<String> dumps = new ArrayList<>();
      Map<String, DirectoryHandle.Entry> byName = new HashMap<>();
      for (DirectoryHandle.Entry entry : handle.list()) {
        byName.put(entry.name(), entry);
        if (DEFAULT_NAME.matcher(entry.name()).matches()
            && entry.kind() == DirectoryHandle.Entry.Kind.FILE
            && entry.uid() == me
            && !entry.name().equals(written)) {
          dumps.add(entry.name());
        }
      }
      // The name's UTC stamp orders dumps of every process the same way the clock did.
      dumps.sort(Comparator.comparing((String n) -> n.replaceFirst("^nativemem-\\d+-", "")));
      for (int i = 0; i < dumps.size() - Math.max(0, keep - 1); i++) {
        String dump = dumps.get(i);
        DirectoryHandle.Entry sidecar = byName.get(dump + ".symbols");
        if (sidecar != null && sidecar.isOwnDirectory()) {
          handle.removeTree(sidecar.name());
        }
        handle.removeTree(dump);
      }
    } catch (RuntimeException e) {
      // best effort, as documented
    }
  }

  /** Dumps to {@code target}, which must not exist; returns the profile in place. */
  static HeapProfile write(Path target) {
    NativeLibraryLoader.load();
    synchronized (LOCK) {
      // Fail before the perf map is written if profiling cannot run at all.
      SamplingStatus status = SamplingStatus.read();
      if (!status.available()) {
        throw new dev.nativemem.base.ProfilingUnavailableException(status.unavailableReason());
      }
      Path perfMap = PerfMap.writeTemp();
      try {
        // Objects there vanish with the process: ours, and JNI libraries extracted to tmp.
        Path tmp = Paths.get(System.getProperty("java.io.tmpdir")).toAbsolutePath();
        String saveFrom =
            NativeLibraryLoader.loadedPath().getParent()
                // A temp dir of "/" would save every library of the process.
                + (tmp.getNameCount() > 0 ? "\n" + tmp : "");
        String dumped =
            NativeBridge.dumpProfileJson(
                target.toString(), saveFrom, perfMap == null ? null : perfMap.toString());
        return HeapProfile.dumped(Json.parseObject(dumped));
      } finally {
        if (perfMap != null) {
          FileTrees.deleteQuietly(perfMap.getParent());
        }
      }
    }
  }
}
