package dev.nativemem.handles.tracking;

/** How a handle stopped owning its native memory; codes match the Rust registry's. */
public enum End {
  CLOSED(0),
  TRANSFERRED(1),
  LEAKED(2),
  /** Leaked, then freed by the finalizer's {@code close()} (rocksdbjni before 7). */
  FINALIZED(3);

  /** The code the Rust registry uses for this end. */
  public final int code;

  End(int code) {
    this.code = code;
  }
}
