package dev.nativemem.attach;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.List;

/**
 * What {@code nativemem attach} and the agent it loads into a JVM say to each other, through the
 * JDK's attach mechanism only (its socket is private to the target's user): the command goes as the
 * agent's argument, the result comes back as a system property of the target, which the CLI reads
 * and then has removed. No file is written for it.
 */
public final class AttachProtocol {
  /** The agent argument of a command, before its encoded words. */
  public static final String COMMAND = "nativemem-attach:";

  /** The same for a command that tracks handles: the agent must install its hooks for it. */
  public static final String TRACKING_COMMAND = "nativemem-attach-tracking:";

  /** The agent argument that removes a result once read. */
  public static final String FORGET = "nativemem-attach-forget:";

  /** Results longer than this are cut, saying so: the property travels in one attach reply. */
  static final int MAX_RESULT_CHARS = 8 << 20;

  private static final String RESULT_PROPERTY = "nativemem.attach.result.";

  private AttachProtocol() {}

  /** The agent argument that runs {@code words} under request {@code id}. */
  public static String command(String id, List<String> words) {
    List<String> all = new ArrayList<>();
    all.add(id);
    all.addAll(words);
    return (words.get(0).equals("handles") ? TRACKING_COMMAND : COMMAND)
        + Base64.getUrlEncoder()
            .encodeToString(String.join("\0", all).getBytes(StandardCharsets.UTF_8));
  }

  /** The id and words of an agent argument made by {@link #command}. */
  static List<String> words(String argument) {
    String encoded = argument.substring(argument.indexOf(':') + 1);
    String text = new String(Base64.getUrlDecoder().decode(encoded), StandardCharsets.UTF_8);
    return Arrays.asList(text.split("\0", -1));
  }

  /** The system property holding the result of request {@code id}. */
  public static String resultProperty(String id) {
    return RESULT_PROPERTY + id;
  }

  /** The result as the property holds it: exit code, the length of stdout, stdout, stderr. */
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

    /** Parses {@link #result}'s form; null for anything else. */
    public static Result parse(String property) {
      if (property == null) {
        return null;
      }
      try {
        int first = property.indexOf('\n');
        int second = property.indexOf('\n', first + 1);
        int exitCode = Integer.parseInt(property.substring(0, first));
        int outLength = Integer.parseInt(property.substring(first + 1, second));
        String rest = property.substring(second + 1);
        return new Result(exitCode, rest.substring(0, outLength), rest.substring(outLength));
      } catch (RuntimeException e) {
        return null;
      }
    }
  }
}
