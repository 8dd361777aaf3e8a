package dev.nativemem.demo;

import dev.nativemem.NativeMemory;
import dev.nativemem.base.Advice;
import java.io.PrintStream;
import java.util.List;

/** The demo's memory breakdown and advice section. */
public final class BreakdownDemo {
  private BreakdownDemo() {}

  public static void run(PrintStream out) {
    out.println();
    out.println("Where the memory is (nativemem breakdown)");
    out.println(NativeMemory.breakdown());
    List<Advice> advice = NativeMemory.advice();
    out.println();
    out.println("Advice (nativemem advice)");
    if (advice.isEmpty()) {
      out.println("  nothing to change");
    }
    for (Advice a : advice) {
      out.println("  " + a.toString().replace("\n", "\n  "));
    }
  }
}
