package dev.nativemem.base.text;

/** The nativemem jar these classes run from, as the command lines we print name it. */
public final class OwnJar {
  private OwnJar() {}

  /**
   * {@code java -jar <this jar's path> <command>}; {@code nativemem.jar} when the classes are not
   * in a jar on the file system (a class directory, a custom loader).
   */
  public static String command(String command) {
    String jar = "nativemem.jar";
    try {
      java.security.CodeSource source = OwnJar.class.getProtectionDomain().getCodeSource();
      if (source != null && source.getLocation().getPath().endsWith(".jar")) {
        jar = java.nio.file.Paths.get(source.getLocation().toURI()).toString();
      }
    } catch (SecurityException | java.net.URISyntaxException | IllegalArgumentException e) {
      // Not a jar on the file system: the generic name says what to run.
    }
    return "java -jar " + jar + " " + command;
  }

  /** How the native library's messages name the {@code env} command before it is made real. */
  private static final String GENERIC_ENV_COMMAND = "java -jar nativemem.jar env";

  /**
   * {@code message} (a native reason) with its generic {@code java -jar nativemem.jar env} naming
   * this jar's path instead, as {@code advice} prints it.
   */
  public static String withThisJar(String message) {
    return message == null || !message.contains(GENERIC_ENV_COMMAND)
        ? message
        : message.replace(GENERIC_ENV_COMMAND, command("env"));
  }
}
