package dev.nativemem.watch;

import dev.nativemem.internal.DirectoryHandle;
import java.io.BufferedWriter;
import java.io.IOException;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.nio.channels.Channels;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.OpenOption;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The files of a bundle being written, each made new (0600) through the bundle directory's handle,
 * and what is missing: a part that fails is removed and listed with why, and the others are still
 * written; a full volume stops the capture ({@link VolumeFull}).
 */
final class BundleParts {
  final DirectoryHandle dir;
  final List<Object> files = new ArrayList<>();
  final List<Object> missing = new ArrayList<>();

  BundleParts(DirectoryHandle dir) {
    this.dir = dir;
  }

  /** Writes text to a new file; may throw, and the part is then listed as missing. */
  interface TextWriter {
    void write(Writer out) throws Exception;
  }

  /** Reads the value a part is written from; may throw. */
  interface Reading<T> {
    T read() throws Exception;
  }

  /** A value's text, as its part holds it; may throw. */
  interface Rendering<T> {
    String render(T value) throws Exception;
  }

  /** Makes a file by other means (a dump); may throw. */
  interface FileMaker {
    void make() throws Exception;
  }

  /** A full volume met while writing a part: the capture stops and keeps nothing. */
  static final class VolumeFull extends RuntimeException {
    private static final long serialVersionUID = 1L;

    VolumeFull(Throwable cause) {
      super(cause);
    }

    /** Whether {@code e} or a cause says the file system is full (ENOSPC, or a quota: EDQUOT). */
    static boolean isCause(Throwable e) {
      for (Throwable t = e; t != null; t = t.getCause()) {
        String m = t.getMessage();
        if (m != null && (m.contains("No space left on device") || m.contains("quota exceeded"))) {
          return true;
        }
      }
      return false;
    }
  }

  void add(String name, String what) {
    Map<String, Object> file = new LinkedHashMap<>();
    file.put("name", name);
    file.put("what", what);
    files.add(file);
  }

  void missing(String what, String why) {
    missing.add(entry(what, why));
  }

  static Map<String, Object> entry(String what, String why) {
    Map<String, Object> entry = new LinkedHashMap<>();
    entry.put("what", what);
    entry.put("why", why);
    return entry;
  }

  /**
   * Writes {@code name} (new, 0600, through the directory's descriptor); on failure removes it and
   * lists it as missing.
   */
  boolean text(String name, String what, TextWriter content) {
    try (Writer out = newFile(dir.anchored(name))) {
      content.write(out);
    } catch (Throwable e) { // an OutOfMemoryError in one part must not lose the others
      failed(name, what, e);
      return false;
    }
    add(name, what);
    return true;
  }

  /**
   * Reads a value and writes {@code name} as {@code render} gives it; returns the value, also when
   * only writing it failed, or null when reading it did. Either failure is listed as missing.
   */
  <T> T text(String name, String what, Reading<T> read, Rendering<T> render) {
    T value = null;
    try (Writer out = newFile(dir.anchored(name))) {
      value = read.read();
      out.write(render.render(value));
    } catch (Throwable e) { // as in text(): one part's failure must not lose the others
      failed(name, what, e);
      return value;
    }
    add(name, what);
    return value;
  }

  /** Makes {@code name} by other means (the page); whether it was made. */
  boolean file(String name, String what, FileMaker maker) {
    return made(
            name,
            what,
            () -> {
              maker.make();
              return Boolean.TRUE;
            })
        != null;
  }

  /**
   * Makes {@code name} by other means (a dump) and returns what made it, or null when that failed.
   */
  <T> T made(String name, String what, Reading<T> make) {
    T value;
    try {
      value = make.read();
    } catch (Throwable e) {
      failed(name, what, e);
      return null;
    }
    add(name, what);
    return value;
  }

  /** Removes what a failed part left and lists it as missing; a full volume stops the capture. */
  private void failed(String name, String what, Throwable e) {
    dir.removeTree(name);
    if (VolumeFull.isCause(e)) {
      throw new VolumeFull(e);
    }
    missing(what + " (" + name + ")", describe(e));
  }

  /**
   * Writes {@code name}, or writes it again: the new file made under a temporary name, then renamed
   * over the old one through the bundle's descriptor, so that a reader (or a kill) finds the old
   * file or the new one, never none, whether the bundle is in place yet or not.
   */
  void replaceAtomically(String name, String content) {
    try {
      dir.replace(name, content);
    } catch (RuntimeException e) {
      if (VolumeFull.isCause(e)) {
        throw new VolumeFull(e);
      }
      throw e;
    }
  }

  private static Writer newFile(Path path) throws IOException {
    return new BufferedWriter(
        new OutputStreamWriter(
            Channels.newOutputStream(
                Files.newByteChannel(
                    path,
                    new HashSet<OpenOption>(
                        Arrays.asList(
                            StandardOpenOption.CREATE_NEW,
                            StandardOpenOption.WRITE,
                            LinkOption.NOFOLLOW_LINKS)),
                    PosixFilePermissions.asFileAttribute(
                        PosixFilePermissions.fromString("rw-------")))),
            StandardCharsets.UTF_8),
        8192);
  }

  private static String describe(Throwable e) {
    String message = e.getMessage();
    return e.getClass().getSimpleName() + (message == null ? "" : ": " + message);
  }
}
