package dev.nativemem.handles;

/** A class a test packs into a library's jar of its own, beside that jar's pom.properties. */
public final class LibraryReader {
  private LibraryReader() {}

  public static String read() {
    return "read";
  }
}
