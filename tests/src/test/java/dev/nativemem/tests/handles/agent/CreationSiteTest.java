package dev.nativemem.tests.handles.agent;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.nativemem.handles.HandleReport;
import dev.nativemem.handles.NativeHandles;
import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.List;
import java.util.zip.Deflater;
import org.junit.jupiter.api.Test;

/**
 * Creation sites are recognised by the stack the JVM reports (method and bytecode index per frame),
 * then named by a Java stack walk: stacks that differ anywhere in the frames shown must get sites
 * of their own, and a repeated stack must keep its site.
 */
class CreationSiteTest {
  private static final List<Deflater> HELD = new ArrayList<>();

  // Two methods whose creating instruction is at the same bytecode index, reached through the
  // same reflective call: only the method tells them apart.
  public static void first() {
    HELD.add(new Deflater());
  }

  public static void second() {
    HELD.add(new Deflater());
  }

  private static void helper() {
    HELD.add(new Deflater());
  }

  private static void viaA() {
    helper();
  }

  private static void viaB() {
    helper();
  }

  private static HandleReport.Site siteWith(HandleReport report, String frame) {
    return report.sites().stream()
        .filter(s -> s.kind().equals("Deflater") && s.stack().contains(frame))
        .findFirst()
        .orElseThrow(() -> new AssertionError(frame + " not in\n" + report));
  }

  @Test
  void stacksThatDifferGetTheirOwnSitesAndARepeatedStackKeepsItsSite() throws Exception {
    try {
      Method first = CreationSiteTest.class.getMethod("first");
      Method second = CreationSiteTest.class.getMethod("second");
      for (int i = 0; i < 3; i++) {
        for (Method method : new Method[] {first, second}) {
          method.invoke(null); // one reflective call site for both methods
        }
        viaA();
        viaB();
      }
      HandleReport report = NativeHandles.report();
      HandleReport.Site a = siteWith(report, ".first(CreationSiteTest.java:");
      HandleReport.Site b = siteWith(report, ".second(CreationSiteTest.java:");
      assertTrue(a != b, report.toString());
      assertEquals(3, a.open(), report.toString());
      assertEquals(3, b.open(), report.toString());
      HandleReport.Site viaA = siteWith(report, ".viaA(CreationSiteTest.java:");
      HandleReport.Site viaB = siteWith(report, ".viaB(CreationSiteTest.java:");
      assertTrue(viaA != viaB, report.toString());
      assertEquals(3, viaA.open(), report.toString());
      assertEquals(3, viaB.open(), report.toString());
    } finally {
      HELD.forEach(Deflater::end);
      HELD.clear();
    }
  }
}
