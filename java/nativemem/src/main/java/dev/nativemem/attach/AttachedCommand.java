package dev.nativemem.attach;

import dev.nativemem.NativeMemory;
import dev.nativemem.agent.AgentRuntime;
import dev.nativemem.handles.HandleReport;
import dev.nativemem.handles.NativeHandles;
import dev.nativemem.profile.HeapProfile;
import dev.nativemem.profile.HeapProfiler;
import dev.nativemem.profile.sampling.SamplingStatus;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.lang.instrument.Instrumentation;
import java.nio.charset.StandardCharsets;
import java.nio.file.Paths;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

/**
 * A command of {@code nativemem attach}, run inside the target JVM by the agent's {@code
 * agentmain}: what it prints goes back through {@link AttachProtocol}, so the attaching terminal
 * shows what the same command shows in-process. Files it writes (dumps) are the target's.
 */
public final class AttachedCommand {
  /** The CLI's own commands, run here exactly as {@code java -jar nativemem.jar} runs them. */
  private static final List<String> CLI_COMMANDS = List.of("stats", "breakdown", "advice");

  /** When this agent started tracking handles after an attach; null before. */
  private static volatile Instant trackingSince;

  private AttachedCommand() {}

  /**
   * The CLI's command runner, handed in by the CLI ({@code cli.AttachedCli}, the agent's entry for
   * an attach command): the CLI uses this package, so this package does not name the CLI.
   */
  @FunctionalInterface
  public interface Cli {
    /** Runs the CLI's command in {@code args}, printing to {@code out} and {@code err}. */
    int run(PrintStream out, PrintStream err, String... args);
  }

  /** Leaves {@code reason} as the failed result of the command in {@code argument}. */
  public static void refuse(String argument, String reason) {
    AttachProtocol.Request request = AttachProtocol.Request.parse(argument);
    leave(request, AttachProtocol.result(1, "", "nativemem attach: " + reason + "\n"));
  }

  /** Runs the command in {@code argument} and leaves its sealed result for the CLI to read. */
  public static void run(String argument, Instrumentation instrumentation, Cli cli) {
    if (argument.startsWith(AttachProtocol.FORGET)) {
      System.clearProperty(
          AttachProtocol.resultProperty(argument.substring(AttachProtocol.FORGET.length())));
      return;
    }
    AttachProtocol.Request request = AttachProtocol.Request.parse(argument);
    List<String> command = request.words;
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    int exitCode;
    try (PrintStream o = new PrintStream(out, true, "UTF-8");
        PrintStream e = new PrintStream(err, true, "UTF-8")) {
      exitCode = execute(command, instrumentation, cli, o, e);
    } catch (Throwable t) {
      exitCode = 1;
      err.reset();
      byte[] message =
          ("nativemem attach"
                  + (command.isEmpty() ? "" : " " + command.get(0))
                  + ": "
                  + failure(t)
                  + "\n")
              .getBytes(StandardCharsets.UTF_8);
      err.write(message, 0, message.length);
    }
    leave(
        request,
        AttachProtocol.result(
            exitCode,
            new String(out.toByteArray(), StandardCharsets.UTF_8),
            new String(err.toByteArray(), StandardCharsets.UTF_8)));
  }

  /**
   * What a failed command says: an exception's message, as the CLI's commands print theirs (ours
   * say what to do); the class only for an error, or an exception without a message.
   */
  static String failure(Throwable t) {
    return t instanceof Exception && t.getMessage() != null ? t.getMessage() : t.toString();
  }

  /** The result, sealed with the request's key, where the CLI reads it; expires unread. */
  private static void leave(AttachProtocol.Request request, String result) {
    ResultExpiry.put(
        AttachProtocol.resultProperty(request.id),
        SealedResult.seal(request.key, request.id, result));
  }

  private static int execute(
      List<String> command,
      Instrumentation instrumentation,
      Cli cli,
      PrintStream out,
      PrintStream err) {
    String name = command.get(0);
    List<String> options = command.subList(1, command.size());
    boolean json = options.contains("--json");
    if (CLI_COMMANDS.contains(name)) {
      return cli.run(out, err, command.toArray(new String[0]));
    }
    switch (name) {
      case "handles":
        return handles(instrumentation, json, out);
      case "profile":
        return profile(options, out, err);
      case "dump":
        String file = outputOption(options);
        HeapProfile dump =
            file == null ? NativeMemory.dumpProfile() : NativeMemory.dumpProfile(Paths.get(file));
        out.println(dump.path());
        return 0;
      case "analyze":
        List<String> analyze = new ArrayList<>();
        analyze.add("analyze");
        analyze.add(NativeMemory.dumpProfile().path().toString());
        analyze.addAll(options);
        return cli.run(out, err, analyze.toArray(new String[0]));
      case "watch":
      case "incident":
        try {
          return name.equals("watch")
              ? AttachedWatch.watch(options, out, err)
              : AttachedWatch.incident(options, out);
        } catch (javax.management.JMException e) {
          err.println("nativemem attach " + name + ": " + e);
          return 1;
        }
      default:
        err.println("nativemem attach: unknown command '" + name + "'");
        return 2;
    }
  }

  /** The tracking level an attach starts in a JVM that runs without the agent. */
  static final String ATTACH_LEVEL = "full";

  /**
   * What the target JVM is told, once, when an attach starts handle tracking in it: the level stays
   * until the JVM exits, and costs a stack walk per handle created.
   */
  static String trackingStarted(Instant at) {
    return "nativemem: 'attach <pid> handles' started handle tracking in this JVM at "
        + at
        + " at level="
        + ATTACH_LEVEL
        + " (a creation stack for every RocksDB and zlib handle; see nativemem.handles.level):"
        + " it stays on until the JVM exits";
  }

  /**
   * The headline of the text report: since when handles are tracked. With the agent given at the
   * JVM's start ({@code attachedAt} null) that is the start; after an attach, handles made before
   * the attach are not counted.
   */
  static String trackedSince(Instant attachedAt) {
    if (attachedAt == null) {
      return "Handles tracked since JVM start (the agent was given at start):";
    }
    return "Handles tracked since attach at "
        + attachedAt
        + " (handles created before the attach are not counted):";
  }

  /**
   * Handles created since tracking began. The first call after an attach starts tracking at {@link
   * #ATTACH_LEVEL} (the already loaded RocksDB and zlib classes are retransformed), and says so to
   * the caller and on the target's standard error; handles made before are never counted.
   */
  private static int handles(Instrumentation instrumentation, boolean json, PrintStream out) {
    String since;
    String started = null;
    if (AgentRuntime.active()) {
      since = trackingSince == null ? "JVM start" : "attach at " + trackingSince;
    } else {
      trackingSince = Instant.now();
      AgentRuntime.start("level=" + ATTACH_LEVEL, instrumentation, true);
      if (!AgentRuntime.active()) {
        out.println("handle tracking could not start in this JVM: see its standard error");
        return 1;
      }
      since = "attach at " + trackingSince;
      started = trackingStarted(trackingSince);
      System.err.println(started); // the target's own log: what changed in it, and when
    }
    HandleReport report = NativeHandles.report();
    if (json) {
      out.println(
          "{\"since\":\""
              + since
              + "\",\"tracking_started\":"
              + (started != null)
              + ",\"report\":"
              + report.toJson()
              + "}");
    } else {
      if (started != null) {
        out.println(started.replace("in this JVM", "in JVM " + ProcessHandle.current().pid()));
      }
      out.println(trackedSince(trackingSince));
      out.println(report);
    }
    return 0;
  }

  private static int profile(List<String> options, PrintStream out, PrintStream err) {
    HeapProfiler profiler = NativeMemory.profiling();
    if (!profiler.isAvailable()) {
      err.println("nativemem attach profile: " + profiler.unavailableReason());
      return 1;
    }
    String action = options.isEmpty() ? "" : options.get(0);
    switch (action) {
      case "start":
        String interval = option(options, "--interval");
        String change = "";
        if (interval != null) {
          long bytes;
          try {
            bytes = Long.parseLong(interval);
          } catch (NumberFormatException e) {
            bytes = 0;
          }
          if (bytes <= 0) {
            err.println(
                "nativemem attach profile: --interval takes a positive number of bytes, got '"
                    + interval
                    + "'");
            return 2;
          }
          change = changeInterval(profiler, bytes);
        }
        profiler.start();
        out.println(
            "sampling on, one sample per "
                + profiler.sampleIntervalBytes()
                + " bytes on average"
                + change);
        out.println(profiler);
        return 0;
      case "stop":
        profiler.stop();
        out.println("sampling off");
        return 0;
      case "status":
        out.println(profiler);
        return 0;
      default:
        err.println("nativemem attach profile: say 'start [--interval BYTES]', 'stop' or 'status'");
        return 2;
    }
  }

  /**
   * {@code --interval BYTES}: the interval changes only by discarding every sample taken
   * (jemalloc's {@code prof.reset}, or the import-rewriting engine's reset), so the interval in
   * effect (BYTES rounded to the nearest power of two under jemalloc, as it rounds it; BYTES itself
   * under import rewriting) is left as it is, samples kept; another one resets, and the answer says
   * so, or that nothing was discarded where the engine held no sample.
   *
   * @return what the answer adds to "sampling on, ..."
   */
  private static String changeInterval(HeapProfiler profiler, long bytes) {
    SamplingStatus status = SamplingStatus.read().requireAvailable();
    long before = status.sampleIntervalBytes();
    boolean imports = status.byImportRewriting();
    if ((imports ? bytes : nearestPowerOfTwo(bytes)) == before) {
      return " (interval unchanged: the samples taken so far are kept)";
    }
    profiler.resetWithSampleInterval(bytes);
    if (!status.mayHoldSamples()) {
      return " (the interval was " + before + " bytes; no sample was held, none discarded)";
    }
    String message =
        "; the interval changed from "
            + before
            + " bytes, which discarded every sample taken so far: "
            + (imports ? "the import-rewriting engine" : "jemalloc")
            + " changes it only by resetting"
            + (imports ? "" : " (prof.reset)")
            + ", so the next dump holds only what is allocated from now on";
    System.err.println("nativemem: heap profile" + message); // the target's own log
    return message;
  }

  /** The power of two nearest {@code bytes}, ties up: jemalloc's {@code lg_prof_sample} of it. */
  static long nearestPowerOfTwo(long bytes) {
    long floor = Long.highestOneBit(bytes);
    return bytes - floor >= Math.max(floor / 2, 1) && floor > 1 && floor < (1L << 62)
        ? floor << 1
        : floor;
  }

  /**
   * The file of {@code -o FILE} or {@code --output FILE}, the CLI's output option everywhere (and
   * {@code --out}, its name in {@code dump} before 0.1.0); null when none is given.
   */
  private static String outputOption(List<String> options) {
    for (String name : List.of("-o", "--output", "--out")) {
      String value = option(options, name);
      if (value != null) {
        return value;
      }
    }
    return null;
  }

  /** The value after {@code name} in {@code options}, or null. */
  private static String option(List<String> options, String name) {
    int at = options.indexOf(name);
    if (at < 0) {
      return null;
    }
    if (at + 1 >= options.size()) {
      throw new IllegalArgumentException(name + " needs a value");
    }
    return options.get(at + 1);
  }
}
