package dev.nativemem.attach;

import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.SecureRandom;
import java.util.Base64;
import javax.crypto.Cipher;
import javax.crypto.spec.GCMParameterSpec;
import javax.crypto.spec.SecretKeySpec;

/**
 * An attach result as the target leaves it in its system properties: AES-256-GCM under the key the
 * CLI sent with the command (through the attach socket, which only the target's user and root can
 * use), bound to the request id, in Base64: {@code nonce || ciphertext || tag}. A reader of the
 * properties without the key (a read-only JMX user) learns only the result's length.
 */
public final class SealedResult {
  static final int KEY_BYTES = 32;
  private static final int NONCE_BYTES = 12;
  private static final int TAG_BITS = 128;
  private static final SecureRandom RANDOM = new SecureRandom();

  private SealedResult() {}

  /** {@code text} sealed with {@code key} for request {@code id}. */
  public static String seal(byte[] key, String id, String text) {
    try {
      byte[] nonce = new byte[NONCE_BYTES];
      RANDOM.nextBytes(nonce);
      Cipher cipher = cipher(Cipher.ENCRYPT_MODE, key, nonce, id);
      byte[] sealed = cipher.doFinal(text.getBytes(StandardCharsets.UTF_8));
      byte[] all = new byte[NONCE_BYTES + sealed.length];
      System.arraycopy(nonce, 0, all, 0, NONCE_BYTES);
      System.arraycopy(sealed, 0, all, NONCE_BYTES, sealed.length);
      return Base64.getEncoder().encodeToString(all);
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("this JVM cannot seal the attach result: " + e, e);
    }
  }

  /** The text of a sealed result; throws if it was not sealed with {@code key} for {@code id}. */
  public static String open(byte[] key, String id, String sealed) {
    try {
      byte[] all = Base64.getDecoder().decode(sealed);
      if (all.length < NONCE_BYTES + TAG_BITS / 8) {
        throw new IllegalStateException("the attach result is too short to be sealed");
      }
      byte[] nonce = java.util.Arrays.copyOf(all, NONCE_BYTES);
      Cipher cipher = cipher(Cipher.DECRYPT_MODE, key, nonce, id);
      byte[] text = cipher.doFinal(all, NONCE_BYTES, all.length - NONCE_BYTES);
      return new String(text, StandardCharsets.UTF_8);
    } catch (GeneralSecurityException | IllegalArgumentException e) {
      throw new IllegalStateException(
          "the attach result was not sealed with this command's key (" + e + "): run it again", e);
    }
  }

  private static Cipher cipher(int mode, byte[] key, byte[] nonce, String id)
      throws GeneralSecurityException {
    Cipher cipher = Cipher.getInstance("AES/GCM/NoPadding");
    cipher.init(mode, new SecretKeySpec(key, "AES"), new GCMParameterSpec(TAG_BITS, nonce));
    cipher.updateAAD(id.getBytes(StandardCharsets.UTF_8));
    return cipher;
  }
}
