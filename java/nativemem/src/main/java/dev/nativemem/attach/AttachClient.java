package dev.nativemem.attach;

import dev.nativemem.internal.Json;
import dev.nativemem.internal.NativeBridge;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Properties;

/**
 * The attaching side: speaks HotSpot's attach protocol through the native library (no {@code
 * jdk.attach}, so it runs from a JRE-only runtime), loads the agent into the target with a command
 * and a fresh key, reads the sealed result from the target's properties, opens it and has it
 * removed.
 */
public final class AttachClient {
  private AttachClient() {}

  /**
   * Runs {@code command} in JVM {@code pid} with the agent of {@code jar}; null if no result.
   * {@code timeout} bounds the wait for the target's attach listener and for each reply but the
   * command's, which {@code commandTimeout} bounds; {@code rerun} is this command line.
   */
  public static AttachProtocol.Result run(
      int pid,
      String jar,
      List<String> command,
      Duration timeout,
      Duration commandTimeout,
      String rerun) {
    String disabled = AttachDisabled.where(pid);
    if (disabled != null) {
      throw new IllegalStateException(AttachDisabled.message(pid, disabled));
    }
    Map<String, Object> opened =
        Json.parseObject(
            NativeBridge.call(
                "attach_open",
                Map.of("pid", pid, "jar", jar, "timeout_ms", timeout.toMillis(), "rerun", rerun)));
    long session = Json.number(opened, "session");
    try {
      String id = AttachProtocol.newId();
      byte[] key = AttachProtocol.newKey();
      String options =
          AttachProtocol.command(
              id, key, Json.string(opened, "jar"), Json.string(opened, "jar_sha256"), command);
      long code;
      try {
        code = loadAgent(session, options, commandTimeout);
      } catch (IllegalStateException e) {
        if (!String.valueOf(e.getMessage()).contains("Module java.instrument not found")) {
          throw e;
        }
        return OutsideAnswer.read(pid, session, command.get(0), timeout);
      }
      if (code != 0) {
        throw new IllegalStateException(
            "process " + pid + " could not run the nativemem agent: " + loadFailure(code));
      }
      String sealed = resultOf(NativeBridge.attachProperties(session, timeout.toMillis()), id);
      try {
        loadAgent(session, AttachProtocol.forget(id), timeout);
      } catch (RuntimeException e) {
        // The target removes an unread result by itself after RESULT_TTL_SECONDS.
      }
      return sealed == null
          ? null
          : AttachProtocol.Result.parse(SealedResult.open(key, id, sealed));
    } finally {
      NativeBridge.call("attach_close", Map.of("session", session));
    }
  }

  /** Loads the session's agent jar with {@code options}: the agent's return code (0: ran). */
  private static long loadAgent(long session, String options, Duration timeout) {
    Map<String, Object> request =
        Map.of("session", session, "options", options, "timeout_ms", timeout.toMillis());
    return NativeBridge.callForNumber("attach_load_agent", request);
  }

  private static String resultOf(byte[] properties, String id) {
    Properties read = new Properties();
    try {
      read.load(new ByteArrayInputStream(properties));
    } catch (IOException | IllegalArgumentException e) {
      throw new IllegalStateException("the target's properties are malformed: " + e, e);
    }
    return read.getProperty(AttachProtocol.resultProperty(id));
  }

  /** What JPLIS's return codes mean (HotSpotVirtualMachine.loadAgent). */
  static String loadFailure(long code) {
    switch ((int) code) {
      case -4:
        return "the target is out of memory";
      case 100:
        return "it cannot read the agent jar, or the jar has no Agent-Class";
      case 101:
        return "it cannot add the agent jar to its class path";
      case 102:
        return "the agent failed to start: see the target's standard error";
      default:
        return "return code " + code;
    }
  }
}
