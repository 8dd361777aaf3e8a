package dev.nativemem.internal;

import java.io.IOException;
import java.nio.file.Path;

/**
 * New files for the user from Java, through the one native file layer ({@code files}: temporary
 * name, mode 0600, renamed into place, never replacing a file, refused in a directory another user
 * could swap; SECURITY.md).
 */
public final class NewFiles {
  private NewFiles() {}

  /**
   * Writes {@code bytes} to {@code target}, or, if it exists, to the first free sibling name {@code
   * <stem>-<pid>[-n]<extension>}.
   *
   * @param noun what the file is, for messages ("report")
   * @return the file written
   */
  public static Path writeFreeName(Path target, byte[] bytes, String noun) throws IOException {
    Path absolute = target.toAbsolutePath();
    Path dir = absolute.getParent();
    String name = absolute.getFileName().toString();
    int dot = name.lastIndexOf('.');
    String stem = dot > 0 ? name.substring(0, dot) : name;
    String extension = dot > 0 ? name.substring(dot) : "";
    long pid = ProcessHandle.current().pid();
    NativeLibraryLoader.load();
    for (int attempt = 0; attempt < 100; attempt++) {
      Path candidate =
          attempt == 0
              ? absolute
              : dir.resolve(stem + "-" + pid + (attempt == 1 ? "" : "-" + attempt) + extension);
      if (NativeBridge.writeNewFile(candidate.toString(), bytes, noun, name)) {
        return candidate;
      }
    }
    throw new IOException("no free name next to " + absolute);
  }

  /**
   * Writes {@code bytes} to the new file {@code target}.
   *
   * @throws IllegalArgumentException if {@code target} exists, saying so
   */
  public static Path writeNew(Path target, byte[] bytes, String noun) {
    Path absolute = target.toAbsolutePath();
    NativeLibraryLoader.load();
    String name = absolute.getFileName() == null ? "" : absolute.getFileName().toString();
    if (!NativeBridge.writeNewFile(absolute.toString(), bytes, noun, name)) {
      throw new IllegalArgumentException(
          absolute + " exists; nativemem never overwrites a file: choose a new name or delete it");
    }
    return absolute;
  }
}
