package dev.nativemem.apps.harness;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;

/**
 * A child of this JVM's cgroup v1 memory cgroup with a limit, for a child JVM that must see a
 * container limit (as in a pod). Made by us, removed by {@link #close()} once empty. Where it
 * cannot be made (no v1 memory controller, not root) {@link #create} says why instead.
 */
public final class MemoryCgroup implements AutoCloseable {
  private final Path dir;

  private MemoryCgroup(Path dir) {
    this.dir = dir;
  }

  /**
   * A new child cgroup limited to {@code limitBytes}.
   *
   * @throws IllegalStateException saying why there is none here
   */
  public static MemoryCgroup create(long limitBytes) throws IOException {
    String own = null;
    for (String line : Files.readAllLines(Paths.get("/proc/self/cgroup"), StandardCharsets.UTF_8)) {
      String[] parts = line.split(":", 3);
      if (parts.length == 3 && java.util.List.of(parts[1].split(",")).contains("memory")) {
        own = parts[2];
      }
    }
    Path mount = Paths.get("/sys/fs/cgroup/memory");
    if (own == null || !Files.isRegularFile(mount.resolve("memory.limit_in_bytes"))) {
      throw new IllegalStateException("no cgroup v1 memory controller at " + mount);
    }
    Path dir =
        mount
            .resolve(own.substring(1))
            .resolve("nativemem-test-" + ProcessHandle.current().pid() + "-" + System.nanoTime());
    try {
      Files.createDirectory(dir);
    } catch (IOException e) {
      throw new IllegalStateException("cannot create a child cgroup (needs root): " + e, e);
    }
    Files.writeString(dir.resolve("memory.limit_in_bytes"), String.valueOf(limitBytes));
    return new MemoryCgroup(dir);
  }

  /**
   * Swap off for the cgroup, as in a pod: the limit with swap equals the limit, and swappiness 0
   * (each where the kernel has it).
   */
  public MemoryCgroup withoutSwap() throws IOException {
    Path memsw = dir.resolve("memory.memsw.limit_in_bytes");
    if (Files.exists(memsw)) {
      Files.writeString(memsw, Files.readString(dir.resolve("memory.limit_in_bytes")).trim());
    }
    Files.writeString(dir.resolve("memory.swappiness"), "0");
    return this;
  }

  /** How many processes the kernel's OOM killer killed in this cgroup ({@code oom_kill}). */
  public long oomKills() throws IOException {
    for (String line : Files.readAllLines(dir.resolve("memory.oom_control"))) {
      if (line.startsWith("oom_kill ")) {
        return Long.parseLong(line.substring(9).trim());
      }
    }
    return -1;
  }

  /** {@code sh -c} that moves itself into this cgroup and then runs {@code "$0" "$@"}. */
  public String[] launcher() {
    return new String[] {
      "sh", "-c", "echo $$ > '" + dir.resolve("cgroup.procs") + "' && exec \"$0\" \"$@\""
    };
  }

  @Override
  public void close() throws IOException {
    Files.deleteIfExists(dir); // rmdir: the kernel refuses while a process is still in it
  }
}
