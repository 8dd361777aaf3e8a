package dev.nativemem;

/** A check found native handles leaked or left open; the message lists kinds, counts and sites. */
public final class HandleLeakError extends AssertionError {
  private static final long serialVersionUID = 1L;

  public HandleLeakError(String message) {
    super(message);
  }
}
