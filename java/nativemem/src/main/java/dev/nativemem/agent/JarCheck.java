package dev.nativemem.agent;

import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;

/**
 * The check an attach command's jar passes before the agent loads a class from it: its bytes hash
 * (SHA-256) to what the attaching side computed of the bytes it handed over, so a jar swapped
 * between the copy and the load is refused, not run.
 */
final class JarCheck {
  /** The most read: the attaching side copies at most this much. */
  private static final long MAX_JAR_BYTES = 256L << 20;

  private JarCheck() {}

  /** Why {@code jar} is not the jar of SHA-256 {@code expected} (lowercase hex); null if it is. */
  static String altered(File jar, String expected) {
    if (expected == null || !expected.matches("[0-9a-f]{64}")) {
      return "it names no SHA-256 of its jar (an attaching nativemem of another version?):"
          + " attach with the nativemem jar this JVM's agent comes from";
    }
    String actual;
    try {
      actual = sha256(jar);
    } catch (IOException e) {
      return "cannot read its jar " + jar + " (" + e.getMessage() + ")";
    }
    if (actual.equals(expected)) {
      return null;
    }
    return "its jar "
        + jar
        + " does not hold the bytes the attaching side sent (SHA-256 "
        + actual
        + ", expected "
        + expected
        + "): someone changed it after it was placed there; look at who can write that"
        + " directory";
  }

  static String sha256(File jar) throws IOException {
    MessageDigest digest;
    try {
      digest = MessageDigest.getInstance("SHA-256");
    } catch (NoSuchAlgorithmException e) {
      throw new IOException("no SHA-256 in this JVM", e);
    }
    long read = 0;
    try (InputStream in = Files.newInputStream(jar.toPath())) {
      byte[] buffer = new byte[64 << 10];
      for (int n = in.read(buffer); n >= 0; n = in.read(buffer)) {
        read += n;
        if (read > MAX_JAR_BYTES) {
          throw new IOException("over " + MAX_JAR_BYTES + " bytes");
        }
        digest.update(buffer, 0, n);
      }
    }
    StringBuilder hex = new StringBuilder();
    for (byte b : digest.digest()) {
      hex.append(String.format("%02x", b));
    }
    return hex.toString();
  }
}
