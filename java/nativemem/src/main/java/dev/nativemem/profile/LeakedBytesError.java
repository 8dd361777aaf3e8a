package dev.nativemem.profile;

import dev.nativemem.base.text.TerminalText;

/**
 * A check found native bytes left live ({@link LiveBytesScope#check}); the message names the lines,
 * native stacks and estimated bytes (control characters shown escaped: test output reaches
 * terminals).
 */
public final class LeakedBytesError extends AssertionError {
  private static final long serialVersionUID = 1L;

  public LeakedBytesError(String message) {
    super(TerminalText.escape(message));
  }
}
