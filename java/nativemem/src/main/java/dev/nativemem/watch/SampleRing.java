package dev.nativemem.watch;

/**
 * The last samples, oldest overwritten first, in one preallocated array: adding a sample allocates
 * nothing, so the watch keeps sampling when the Java heap is nearly full. Columns are the {@code
 * static final} indexes below; -1 is "unknown". Thread-safe.
 */
final class SampleRing {
  static final int TIME = 0;
  static final int LIMIT = 1;
  static final int USAGE = 2;
  static final int RSS = 3;
  static final int ALLOCATOR_ALLOCATED = 4;
  static final int ALLOCATOR_RESIDENT = 5;
  static final int OOM = 6;
  static final int OOM_KILL = 7;

  /** PSI {@code some avg10}, in hundredths of a percent. */
  static final int PSI_SOME_AVG10 = 8;

  static final int HANDLES_OPEN = 9;
  static final int HANDLES_LEAKED = 10;
  static final int HEAP_USED = 11;
  static final int HEAP_COMMITTED = 12;
  static final int COLUMNS = 13;

  /** The native sample's slots land in columns {@code LIMIT..HANDLES_LEAKED}, in order. */
  static final int NATIVE_SLOTS = 10;

  private final long[] rows;
  private final int capacity;
  private int next;
  private int size;

  SampleRing(int capacity) {
    if (capacity < 1) {
      throw new IllegalArgumentException("capacity must be at least 1, got " + capacity);
    }
    this.capacity = capacity;
    this.rows = new long[capacity * COLUMNS];
  }

  int capacity() {
    return capacity;
  }

  synchronized int size() {
    return size;
  }

  /** Copies {@code row} ({@link #COLUMNS} values) in as the newest sample. */
  synchronized void add(long[] row) {
    System.arraycopy(row, 0, rows, next * COLUMNS, COLUMNS);
    next = (next + 1) % capacity;
    size = Math.min(size + 1, capacity);
  }

  /** Column {@code column} of the sample {@code back} places before the newest (0: newest). */
  synchronized long back(int back, int column) {
    if (back < 0 || back >= size) {
      throw new IndexOutOfBoundsException("sample " + back + " back of " + size);
    }
    int at = Math.floorMod(next - 1 - back, capacity);
    return rows[at * COLUMNS + column];
  }

  /**
   * Copies the samples, oldest first, into {@code into} (at least {@code capacity * COLUMNS} long);
   * returns how many.
   */
  synchronized int copyOldestFirst(long[] into) {
    int oldest = size < capacity ? 0 : next;
    for (int i = 0; i < size; i++) {
      System.arraycopy(rows, ((oldest + i) % capacity) * COLUMNS, into, i * COLUMNS, COLUMNS);
    }
    return size;
  }
}
