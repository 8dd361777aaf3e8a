package dev.nativemem.internal;

import dev.nativemem.base.NativeMemoryException;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;

/**
 * A directory opened once by a job of the native library (the watch directory, a bundle): every
 * later step is a job given its descriptor ({@code rust/nativemem/src/jobs/}, on the file layer
 * {@code rust/nativemem/src/files}), so a link or a directory swapped in above it after it was
 * opened redirects nothing (SECURITY.md). The descriptor is closed exactly once, by {@link #close},
 * never while another call of this handle uses it; any call after that throws {@link
 * IllegalStateException}.
 *
 * <p>Methods throw {@link NativeMemoryException} naming the directory and the system's reason, or
 * {@link IllegalArgumentException} for a name that is not one path component.
 */
public final class DirectoryHandle implements AutoCloseable {
  private final Path shown;
  private long fd;

  private DirectoryHandle(long fd, Path shown) {
    this.fd = fd;
    this.shown = shown;
  }

  /**
   * Takes over a directory descriptor a job answered ({@code watch_directory_open}), now this
   * handle's to close; {@code shown} is its path, for messages.
   */
  public static DirectoryHandle adopt(long fd, Path shown) {
    return new DirectoryHandle(fd, Objects.requireNonNull(shown, "shown"));
  }

  /** The path this handle was opened by (or made under), for messages only: never reopened. */
  public Path path() {
    return shown;
  }

  /**
   * A path reaching {@code name} through this handle's descriptor ({@code /proc/self/fd/<n>/name};
   * {@code ""} for the directory itself), for code that takes a path: the kernel resolves the
   * descriptor, no name above it. Valid while this handle is open.
   */
  public synchronized Path anchored(String name) {
    return Paths.get("/proc/self/fd/" + fd()).resolve(name);
  }

  /**
   * Runs the job {@code job} ({@link NativeBridge#call}) on this directory: {@code request} with
   * the descriptor as its {@code directory}, under this handle's lock, so that {@link #close} never
   * races it. Returns the job's answer, as JSON.
   */
  public synchronized String call(String job, Map<String, Object> request) {
    Map<String, Object> withDirectory = new LinkedHashMap<>(request);
    withDirectory.put("directory", fd());
    return NativeBridge.call(job, Json.write(withDirectory));
  }

  /**
   * Opens the existing directory {@code name} without following a link, checked to be this user's
   * ({@code directory_open}).
   */
  public DirectoryHandle openDirectory(String name) {
    Number child = (Number) Json.parse(call("directory_open", Map.of("name", name)));
    return new DirectoryHandle(child.longValue(), shown.resolve(name));
  }

  /**
   * Writes {@code text} to {@code name}, anew or over the old file, atomically: a new 0600 file
   * under a temporary name renamed over it, so a reader (or a kill) finds the old file or the new
   * one, never none ({@code directory_replace}).
   */
  public void replace(String name, String text) {
    call("directory_replace", Map.of("name", name, "text", text));
  }

  /**
   * Removes {@code name} and everything of ours below it, descending only into directories of ours
   * opened without following links; an entry of another user stays (and so do the directories above
   * it). Returns whether all of it went ({@code directory_remove}).
   */
  public boolean removeTree(String name) {
    return Boolean.TRUE.equals(Json.parse(call("directory_remove", Map.of("name", name))));
  }

  /** Every use of the descriptor holds this handle's lock, so {@link #close} never races one. */
  private long fd() {
    if (fd < 0) {
      throw new IllegalStateException("the directory handle of " + shown + " is closed");
    }
    return fd;
  }

  /** Closes the descriptor; later calls do nothing. */
  @Override
  public synchronized void close() {
    if (fd >= 0) {
      long open = fd;
      fd = -1;
      NativeBridge.call("directory_close", Map.of("directory", open));
    }
  }

  @Override
  public String toString() {
    return shown.toString();
  }
}
