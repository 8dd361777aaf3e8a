package dev.nativemem.tests.handles;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.nativemem.tests.handles.ScenarioJvm.Result;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Advice names every planted handle problem with the line that planted it. */
class AdviceJvmTest {

  @Test
  void adviceNamesPlantedHandlesZombieCacheAndForeignMalloc() throws Exception {
    Result r =
        new ScenarioJvm()
            .agent("level=full")
            .jvmArg("-XX:NativeMemoryTracking=summary")
            .mainClass(AdviceScenario.class.getName())
            .run();
    assertEquals(0, r.exitCode(), r.toString());
    String at = "(AdviceScenario.java:";
    String open = the(r, "HANDLES_OPEN", AdviceScenario.INFLATERS + " Inflater open, created at ");
    assertTrue(open.contains(at + r.value("inflater_line") + ")"), open);
    String growing = the(r, "HANDLES_GROWING", "Inflater open at ");
    assertTrue(
        growing.contains(
            at + r.value("inflater_line") + ") grew from 0 to " + AdviceScenario.INFLATERS),
        growing);
    String leaked = the(r, "HANDLES_LEAKED", AdviceScenario.STATISTICS + " Statistics leaked");
    assertTrue(leaked.contains(at + r.value("statistics_line") + ")"), leaked);
    String zombie = the(r, "ZOMBIE_CACHE", "LRUCache of 24.0 MiB");
    assertTrue(zombie.contains(at + r.value("cache_line") + ")"), zombie);
    assertTrue(
        zombie.contains(
            "ColumnFamilyOptions (open) created at "
                + AdviceScenario.class.getName()
                + ".main"
                + at
                + r.value("retainer_line")
                + ")"),
        zombie);
    // zlib.h: deflate needs (1 << (windowBits + 2)) + (1 << (memLevel + 9)) bytes, 256 KiB at
    // the defaults, for each of the Deflaters: malloc that NMT does not count as the JVM's.
    String foreign = the(r, "MALLOC_OUTSIDE_JVM", "");
    assertTrue(foreign.contains(AdviceScenario.DEFLATERS + " Deflater"), foreign);
    java.util.regex.Matcher outside =
        java.util.regex.Pattern.compile(": ([0-9.]+) MiB belongs to native libraries")
            .matcher(foreign);
    assertTrue(outside.find(), foreign);
    double zlibMib = AdviceScenario.DEFLATERS * ((1 << 17) + (1 << 17)) / (double) (1 << 20);
    assertTrue(Double.parseDouble(outside.group(1)) >= zlibMib, zlibMib + " MiB: " + foreign);
  }

  /** The one advice line of {@code code} whose message starts with {@code start}. */
  private static String the(Result r, String code, String start) {
    List<String> found = new ArrayList<>();
    for (String line : r.stdout().split("\n")) {
      if (line.startsWith("advice " + code + " " + start)) {
        found.add(line);
      }
    }
    assertEquals(1, found.size(), code + " '" + start + "' in\n" + r);
    return found.get(0);
  }
}
