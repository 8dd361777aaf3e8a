package dev.nativemem.handles;

import dev.nativemem.base.text.TerminalText;

/**
 * A check found native handles leaked or left open; the message lists kinds, counts and sites (its
 * control characters, from thread names or frames, shown escaped: test output reaches terminals).
 */
public final class HandleLeakError extends AssertionError {
  private static final long serialVersionUID = 1L;

  public HandleLeakError(String message) {
    super(TerminalText.escape(message));
  }
}
