package dev.nativemem.attach;

import dev.nativemem.internal.ByteFormat;
import dev.nativemem.internal.Json;
import dev.nativemem.internal.JsonBinding;
import dev.nativemem.internal.NativeBridge;
import dev.nativemem.memory.reading.ContainerMemory;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;

/**
 * What {@code attach} answers about a JVM that cannot load nativemem's agent (its runtime has no
 * {@code java.instrument}): its memory as {@code /proc} shows it, its memory cgroup (limit, usage,
 * OOM kills: the target's own, read through its root), and the JVM's own diagnostic commands over
 * the attach socket, which need no agent; what could not be seen is named.
 */
final class OutsideAnswer {
  /** The diagnostic commands asked for, in order: each answers, or its refusal is shown. */
  private static final String[] DIAGNOSTIC_COMMANDS = {
    "GC.heap_info", "VM.native_memory summary", "System.native_heap_info"
  };

  private OutsideAnswer() {}

  /** The commands answered from outside; the others need the agent, and fail. */
  private static final List<String> ANSWERED = List.of("stats", "breakdown", "advice");

  /**
   * The answer to {@code command}: for {@link #ANSWERED} what is seen from outside (exit 0); for
   * the others, which need the agent (a dump, a profile, the watch), why they cannot run (exit 1).
   */
  static AttachProtocol.Result read(int pid, long session, String command, Duration timeout) {
    String missing =
        "nativemem: process "
            + pid
            + " cannot load nativemem's agent: its runtime has no java.instrument module (add it"
            + " to the jlink --add-modules list";
    if (!ANSWERED.contains(command)) {
      return AttachProtocol.Result.of(
          1,
          "",
          missing
              + "), so '"
              + command
              + "' cannot run there; "
              + String.join(", ", ANSWERED)
              + " answer from outside\n");
    }
    StringBuilder out = new StringBuilder();
    out.append("process ").append(pid).append(", answered from outside (no agent)\n");
    out.append(status(ProcText.read(pid, "status")));
    out.append(cgroup(pid));
    for (String diagnostic : DIAGNOSTIC_COMMANDS) {
      out.append("--- ").append(diagnostic).append('\n');
      try {
        byte[] reply =
            NativeBridge.attachDiagnosticCommand(session, diagnostic, timeout.toMillis());
        out.append(new String(reply, StandardCharsets.UTF_8).strip()).append('\n');
      } catch (RuntimeException e) {
        out.append("absent: ").append(e.getMessage()).append('\n');
      }
    }
    String err =
        missing
            + " for the whole answer). Not seen from outside: the allocator's statistics, native"
            + " handles, the breakdown's attribution\n";
    return AttachProtocol.Result.of(0, out.toString(), err);
  }

  /** The target's memory cgroup: its limit and where it is set, usage, and OOM kills. */
  static String cgroup(int pid) {
    String json;
    try {
      json = NativeBridge.call("container_memory_of", Map.of("pid", pid));
    } catch (RuntimeException e) {
      return "cgroup    absent: " + e.getMessage() + "\n";
    }
    if (json == null || json.equals("null")) {
      return "cgroup    absent: no memory cgroup found for process " + pid + "\n";
    }
    ContainerMemory c = JsonBinding.read(ContainerMemory.class, Json.parseObject(json));
    StringBuilder line =
        new StringBuilder("cgroup    ")
            .append(c.cgroupVersion())
            .append(' ')
            .append(c.cgroup())
            .append(": limit ");
    if (c.limitBytes() == null) {
      line.append("none");
    } else {
      line.append(ByteFormat.human(c.limitBytes())).append(" (set at ").append(c.limitCgroup());
      line.append(')');
    }
    line.append(", usage ").append(ByteFormat.human(c.usageBytes()));
    if (c.anonBytes() != null) {
      line.append(", anon ").append(ByteFormat.human(c.anonBytes()));
    }
    if (c.fileBytes() != null) {
      line.append(", file ").append(ByteFormat.human(c.fileBytes()));
    }
    if (c.oomKillEvents() != null) {
      line.append(", OOM kills ").append(c.oomKillEvents());
    }
    return line.append(" (/proc/<pid>/cgroup)\n").toString();
  }

  /** RSS and its parts, and threads, from {@code /proc/<pid>/status}. */
  private static String status(String text) {
    StringBuilder line = new StringBuilder("process   ");
    for (String field : new String[] {"VmRSS", "RssAnon", "RssFile", "RssShmem", "Threads"}) {
      for (String row : text.split("\n")) {
        if (row.startsWith(field + ":")) {
          String value = row.substring(field.length() + 1).trim();
          line.append(' ').append(field).append(' ').append(human(value));
        }
      }
    }
    return line.append(" (/proc/<pid>/status)\n").toString();
  }

  private static String human(String value) {
    if (!value.endsWith(" kB")) {
      return value;
    }
    try {
      long kib = Long.parseLong(value.substring(0, value.length() - 3).trim());
      return ByteFormat.human(kib * 1024);
    } catch (NumberFormatException e) {
      return value;
    }
  }
}
