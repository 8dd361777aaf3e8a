package dev.nativemem.attach;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.List;
import org.junit.jupiter.api.Test;

class SealedResultTest {
  private static final String RESULT = AttachProtocol.result(0, "{\"rss_bytes\":123}\n", "");

  @Test
  void opensOnlyWithItsKeyAndId() {
    byte[] key = AttachProtocol.newKey();
    String id = AttachProtocol.newId();
    String sealed = SealedResult.seal(key, id, RESULT);
    assertFalse(
        new String(Base64.getDecoder().decode(sealed), StandardCharsets.ISO_8859_1)
            .contains("rss_bytes"));
    assertEquals(RESULT, SealedResult.open(key, id, sealed));
    assertNotEquals(sealed, SealedResult.seal(key, id, RESULT), "a fresh nonce each time");
    assertThrows(
        IllegalStateException.class, () -> SealedResult.open(AttachProtocol.newKey(), id, sealed));
    assertThrows(
        IllegalStateException.class, () -> SealedResult.open(key, AttachProtocol.newId(), sealed));
    assertThrows(IllegalStateException.class, () -> SealedResult.open(key, id, "not base64!"));
    assertThrows(IllegalStateException.class, () -> SealedResult.open(key, id, "AAAA"));
  }

  @Test
  void theAgentReadsBackWhatTheClientSent() {
    byte[] key = AttachProtocol.newKey();
    String argument =
        AttachProtocol.command(
            "id1",
            key,
            "/tmp/.nativemem-agent-x.jar",
            "00".repeat(32),
            List.of("report", "--top", "5"));
    AttachProtocol.Request request = AttachProtocol.Request.parse(argument);
    assertEquals("id1", request.id);
    assertEquals(
        Base64.getEncoder().encodeToString(key), Base64.getEncoder().encodeToString(request.key));
    assertEquals("/tmp/.nativemem-agent-x.jar", request.jar);
    assertEquals(List.of("report", "--top", "5"), request.words);
    assertEquals(
        AttachProtocol.TRACKING_COMMAND,
        AttachProtocol.command("i", key, "j", "00".repeat(32), List.of("handles"))
            .substring(0, 26));
  }
}
