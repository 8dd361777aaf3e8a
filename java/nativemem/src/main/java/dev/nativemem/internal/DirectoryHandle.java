package dev.nativemem.internal;

import dev.nativemem.base.NativeMemoryException;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * A directory opened once, through the native file layer ({@code rust/nativemem/src/files}): every
 * later step (making a private child, writing a new file, renaming, listing, removing a tree of
 * ours, reading a file capped) works relative to its descriptor, so a link or a directory swapped
 * in above it after it was opened redirects nothing (SECURITY.md). The descriptor is closed exactly
 * once, by {@link #close}, never while another call of this handle uses it; any call after that
 * throws {@link IllegalStateException}.
 *
 * <p>Methods throw {@link NativeMemoryException} naming the directory and the system's reason, or
 * {@link IllegalArgumentException} for a name that is not one path component or an entry refused (a
 * link, a FIFO, a file too large).
 */
public final class DirectoryHandle implements AutoCloseable {
  private static final int GROUP_OR_OTHER_WRITE = 0022;

  private final Path shown;
  private long fd;

  private DirectoryHandle(long fd, Path shown) {
    this.fd = fd;
    this.shown = shown;
  }

  /**
   * Opens the directory {@code path} component by component from {@code /} without following a
   * link, except one that root or this process's user owns, which is read once and the walk goes on
   * from descriptors. A path {@code /proc/self/fd/<n>/...} starts from a handle this process holds
   * ({@link #anchored}).
   */
  public static DirectoryHandle open(Path path) {
    return open(path, false);
  }

  /** As {@link #open}, making each missing directory of {@code path} with mode 0700. */
  public static DirectoryHandle openOrCreate(Path path) {
    return open(path, true);
  }

  private static DirectoryHandle open(Path path, boolean create) {
    Objects.requireNonNull(path, "path");
    NativeLibraryLoader.load();
    Path absolute = path.toAbsolutePath();
    return new DirectoryHandle(NativeBridge.dirOpen(absolute.toString(), create), absolute);
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

  /** The owner's uid. */
  public int ownerUid() {
    return (int) stat()[0];
  }

  /** The permission bits and sticky/setgid bits ({@code 07777}). */
  public int mode() {
    return (int) (stat()[1] & 07777);
  }

  /** Whether this process's user owns the directory and no group or other user can write it. */
  public boolean isPrivateToUs() {
    long[] st = stat();
    return (int) st[0] == FileOwnership.processUid() && (st[1] & GROUP_OR_OTHER_WRITE) == 0;
  }

  private synchronized long[] stat() {
    long[] out = new long[4];
    NativeBridge.dirStat(fd(), out);
    return out;
  }

  /** Whether an entry {@code name} exists (as anything, a dangling link included). */
  public synchronized boolean has(String name) {
    return NativeBridge.dirHas(fd(), name);
  }

  /**
   * Makes the directory {@code name} (mode 0700; it must not exist), opens it without following a
   * link and checks on its descriptor that it is ours and private.
   */
  public synchronized DirectoryHandle makePrivateDirectory(String name) {
    return new DirectoryHandle(NativeBridge.dirMakePrivate(fd(), name), shown.resolve(name));
  }

  /** Opens the existing directory {@code name} without following a link; check it on the result. */
  public synchronized DirectoryHandle openDirectory(String name) {
    return new DirectoryHandle(NativeBridge.dirOpenChild(fd(), name), shown.resolve(name));
  }

  /**
   * Writes {@code bytes} to the new file {@code name} (0600, temporary name, synced, renamed into
   * place without replacing); false, writing nothing, when {@code name} exists.
   */
  public synchronized boolean writeNew(String name, byte[] bytes) {
    return NativeBridge.dirWriteNew(fd(), name, bytes);
  }

  /** Renames {@code from} here to {@code to} in {@code into}; false if {@code to} exists. */
  public synchronized boolean rename(String from, DirectoryHandle into, String to) {
    return NativeBridge.dirRename(fd(), from, into.fd(), to);
  }

  /** The entries, each as {@code fstatat} without following links sees it. */
  public synchronized List<Entry> list() {
    List<Entry> entries = new ArrayList<>();
    for (Object o : Json.parseList(NativeBridge.dirListJson(fd()))) {
      @SuppressWarnings("unchecked")
      Map<String, Object> e = (Map<String, Object>) o;
      if (Boolean.TRUE.equals(e.get("exact_name"))) {
        entries.add(
            new Entry(
                (String) e.get("name"),
                ((Number) e.get("uid")).intValue(),
                Entry.Kind.valueOf(((String) e.get("kind")).toUpperCase(java.util.Locale.ROOT)),
                ((Number) e.get("modified_ms")).longValue(),
                ((Number) e.get("size_bytes")).longValue()));
      }
    }
    return Collections.unmodifiableList(entries);
  }

  /**
   * Removes {@code name} and everything of ours below it, descending only into directories of ours
   * opened without following links; an entry of another user stays (and so do the directories above
   * it). Returns whether all of it went.
   */
  public synchronized boolean removeTree(String name) {
    return NativeBridge.dirRemoveTree(fd(), name);
  }

  /** Bytes of the regular files under {@code name}, links not followed. */
  public synchronized long treeBytes(String name) {
    return NativeBridge.dirTreeBytes(fd(), name);
  }

  /** Free bytes of the file system for this user ({@code fstatvfs}: {@code f_bavail}). */
  public long freeBytes() {
    return space()[0];
  }

  /** Size of the file system in bytes. */
  public long totalBytes() {
    return space()[1];
  }

  private synchronized long[] space() {
    long[] out = new long[2];
    NativeBridge.dirSpace(fd(), out);
    return out;
  }

  /**
   * The bytes of the regular file {@code name}, opened {@code O_NOFOLLOW|O_NONBLOCK} and checked on
   * its descriptor; null when there is no such entry.
   *
   * @throws IllegalArgumentException if it is a link, a FIFO, a device, a directory, or larger than
   *     {@code maxBytes}, saying which
   */
  public synchronized byte[] readRegular(String name, long maxBytes) {
    return NativeBridge.dirReadRegular(fd(), name, maxBytes);
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
      NativeBridge.dirClose(open);
    }
  }

  @Override
  public String toString() {
    return shown.toString();
  }

  /** One entry of a directory. */
  public static final class Entry {
    /** What the entry is, a link not followed. */
    public enum Kind {
      DIRECTORY,
      FILE,
      LINK,
      OTHER
    }

    private final String name;
    private final int uid;
    private final Kind kind;
    private final long modifiedMillis;
    private final long sizeBytes;

    Entry(String name, int uid, Kind kind, long modifiedMillis, long sizeBytes) {
      this.name = name;
      this.uid = uid;
      this.kind = kind;
      this.modifiedMillis = modifiedMillis;
      this.sizeBytes = sizeBytes;
    }

    public String name() {
      return name;
    }

    public int uid() {
      return uid;
    }

    public Kind kind() {
      return kind;
    }

    public long modifiedMillis() {
      return modifiedMillis;
    }

    public long sizeBytes() {
      return sizeBytes;
    }

    /** A directory (not a link) this process's user owns. */
    public boolean isOwnDirectory() {
      return kind == Kind.DIRECTORY && uid == FileOwnership.processUid();
    }
  }
}
