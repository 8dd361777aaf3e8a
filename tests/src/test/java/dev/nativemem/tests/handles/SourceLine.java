package dev.nativemem.tests.handles;

/** The source line of the caller: tests plant a handle on a line and expect that line back. */
public final class SourceLine {
  private SourceLine() {}

  public static int here() {
    return StackWalker.getInstance()
        .walk(s -> s.skip(1).findFirst())
        .map(StackWalker.StackFrame::getLineNumber)
        .orElse(-1);
  }
}
