package dev.nativemem.tests;

import dev.nativemem.attach.AttachProtocol;
import dev.nativemem.internal.Json;
import dev.nativemem.internal.NativeBridge;
import java.util.Arrays;
import java.util.Base64;
import java.util.Map;

/**
 * An attach client killed between the command and the read of its result: loads the command into
 * JVM {@code args[0]}, prints its request id and key, and ends without reading or forgetting. With
 * {@code -Dnativemem.swap.with=FILE}, it plays the other user who swaps the jar after it was
 * placed: that file's bytes replace the jar the target is told to load.
 */
public final class AttachHalfway {
  private AttachHalfway() {}

  public static void main(String[] args) {
    Map<String, Object> opened =
        Json.parseObject(
            NativeBridge.call(
                "attach_open",
                Map.of(
                    "pid",
                    Integer.parseInt(args[0]),
                    "jar",
                    System.getProperty("nativemem.jar", args.length > 0 ? jar() : ""),
                    "timeout_ms",
                    10_000,
                    "rerun",
                    "halfway")));
    long session = Json.number(opened, "session");
    String swap = System.getProperty("nativemem.swap.with");
    if (swap != null) {
      try {
        java.nio.file.Files.copy(
            java.nio.file.Paths.get(swap),
            java.nio.file.Paths.get(Json.string(opened, "jar")),
            java.nio.file.StandardCopyOption.REPLACE_EXISTING);
      } catch (java.io.IOException e) {
        throw new java.io.UncheckedIOException(e);
      }
    }
    String id = AttachProtocol.newId();
    byte[] key = AttachProtocol.newKey();
    Map<String, Object> load =
        Map.of(
            "session",
            session,
            "options",
            AttachProtocol.command(
                id,
                key,
                Json.string(opened, "jar"),
                Json.string(opened, "jar_sha256"),
                Arrays.asList(args).subList(1, args.length)),
            "timeout_ms",
            60_000);
    long code = NativeBridge.callForNumber("attach_load_agent", load);
    NativeBridge.call("attach_close", Map.of("session", session));
    System.out.println(id + " " + Base64.getEncoder().encodeToString(key) + " " + code);
    Runtime.getRuntime().halt(code == 0 ? 0 : 1);
  }

  private static String jar() {
    try {
      return java.nio.file.Paths.get(
              NativeBridge.class.getProtectionDomain().getCodeSource().getLocation().toURI())
          .toString();
    } catch (java.net.URISyntaxException e) {
      throw new IllegalStateException(e);
    }
  }
}
