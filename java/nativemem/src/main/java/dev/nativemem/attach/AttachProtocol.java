package dev.nativemem.attach;

import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.List;

/**
 * What {@code nativemem attach} and the agent it loads into a JVM say to each other, through the
 * JVM's attach socket only (private to the target's user and root): the command goes as the agent's
 * argument, with a fresh key; the result comes back as a system property of the target, sealed with
 * that key ({@link SealedResult}), which the CLI reads with the attach {@code properties} command
 * and then has removed. A result left unread (the CLI was killed) is removed by the target after
 * {@link #RESULT_TTL_SECONDS}; until then whoever can read the target's properties (a read-only JMX
 * user) sees only ciphertext. No file is written for it.
 */
public final class AttachProtocol {
  /** The agent argument of a command, before its encoded words. */
  public static final String COMMAND = "nativemem-attach:";

  /** The same for a command that tracks handles: the agent must install its hooks for it. */
  public static final String TRACKING_COMMAND = "nativemem-attach-tracking:";

  /** The agent argument that removes a result once read. */
  public static final String FORGET = "nativemem-attach-forget:";

  /** How long the target keeps a result nobody read. */
  public static final int RESULT_TTL_SECONDS = 30;

  /** Results longer than this are cut, saying so: the property travels in one attach reply. */
  static final int MAX_RESULT_CHARS = 8 << 20;

  private static final String RESULT_PROPERTY = "nativemem.attach.result.";
  private static final SecureRandom RANDOM = new SecureRandom();

  private AttachProtocol() {}

  /** A request id no one can guess: the name of its result property. */
  public static String newId() {
    byte[] id = new byte[12];
    RANDOM.nextBytes(id);
    return Base64.getUrlEncoder().withoutPadding().encodeToString(id);
  }

  /** A fresh key that seals one result. */
  public static byte[] newKey() {
    byte[] key = new byte[SealedResult.KEY_BYTES];
    RANDOM.nextBytes(key);
    return key;
  }

  /**
   * The agent argument that runs {@code words} under request {@code id}, sealing the result with
   * {@code key}; {@code jar} is the agent jar's path as the target reads it (a copy made for it is
   * removed afterwards, so the agent cannot go by the path it was first loaded from) and {@code
   * jarSha256} the SHA-256 of the bytes handed to it: the agent refuses a jar that hashes otherwise
   * before it loads a class from it.
   */
  public static String command(
      String id, byte[] key, String jar, String jarSha256, List<String> words) {
    List<String> all = new ArrayList<>();
    all.add(id);
    all.add(Base64.getUrlEncoder().withoutPadding().encodeToString(key));
    all.add(jar);
    all.add(jarSha256);
    all.addAll(words);
    return (words.get(0).equals("handles") ? TRACKING_COMMAND : COMMAND)
        + Base64.getUrlEncoder()
            .withoutPadding()
            .encodeToString(String.join("\0", all).getBytes(StandardCharsets.UTF_8));
  }

  /** The agent argument that removes the result of request {@code id}. */
  public static String forget(String id) {
    return FORGET + id;
  }

  /** A command as the agent received it. */
  static final class Request {
    final String id;
    final byte[] key;
    final String jar;
    final List<String> words;

    private Request(String id, byte[] key, String jar, List<String> words) {
      this.id = id;
      this.key = key;
      this.jar = jar;
      this.words = words;
    }

    /** The request in an agent argument made by {@link #command}. */
    static Request parse(String argument) {
      String encoded = argument.substring(argument.indexOf(':') + 1);
      String text = new String(Base64.getUrlDecoder().decode(encoded), StandardCharsets.UTF_8);
      List<String> all = Arrays.asList(text.split("\0", -1));
      if (all.size() < 5) {
        throw new IllegalArgumentException("an attach request of another nativemem version");
      }
      return new Request(
          all.get(0),
          Base64.getUrlDecoder().decode(all.get(1)),
          all.get(2),
          new ArrayList<>(all.subList(4, all.size())));
    }
  }

  /** The system property holding the result of request {@code id}. */
  public static String resultProperty(String id) {
    return RESULT_PROPERTY + id;
  }

  /** The result before sealing: exit code, the length of stdout, stdout, stderr. */
  static String result(int exitCode, String out, String err) {
    if (out.length() + err.length() > MAX_RESULT_CHARS) {
      out = out.substring(0, Math.min(out.length(), MAX_RESULT_CHARS));
      err = "nativemem attach: output cut at " + MAX_RESULT_CHARS + " characters\n";
    }
    return exitCode + "\n" + out.length() + "\n" + out + err;
  }

  /** A result read back: what the command printed and its exit code. */
  public static final class Result {
    public final int exitCode;
    public final String out;
    public final String err;

    private Result(int exitCode, String out, String err) {
      this.exitCode = exitCode;
      this.out = out;
      this.err = err;
    }

    /** A result made on the attaching side (what it read from outside). */
    static Result of(int exitCode, String out, String err) {
      return new Result(exitCode, out, err);
    }

    /** Parses {@link #result}'s form; null for anything else. */
    public static Result parse(String text) {
      if (text == null) {
        return null;
      }
      try {
        int first = text.indexOf('\n');
        int second = text.indexOf('\n', first + 1);
        int exitCode = Integer.parseInt(text.substring(0, first));
        int outLength = Integer.parseInt(text.substring(first + 1, second));
        String rest = text.substring(second + 1);
        return new Result(exitCode, rest.substring(0, outLength), rest.substring(outLength));
      } catch (RuntimeException e) {
        return null;
      }
    }
  }
}
