package dev.nativemem.base;

import dev.nativemem.base.text.TerminalText;

/**
 * A test's check found native memory leaked: handles leaked or left open (kinds, counts and
 * creation sites), or native bytes left live (lines, native stacks and estimated bytes), or both.
 * Control characters in the message, from thread names or frames, are shown escaped: test output
 * reaches terminals.
 */
public final class NativeLeakError extends AssertionError {
  private static final long serialVersionUID = 1L;

  public NativeLeakError(String message) {
    super(TerminalText.escape(message));
  }
}
