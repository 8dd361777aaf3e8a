package dev.nativemem.tests.handles;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.nativemem.tests.handles.ScenarioJvm.Result;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Creation sites at level=full once the core keys stacks with its fast walker: a creation planted
 * on a known line, reached from two callers, is reported at that line, one site per caller, each
 * with the count of handles it created.
 */
class StackKeysJvmTest {
  @Test
  void plantedCreationsAreReportedAtTheirLineWithTheirCounts() throws Exception {
    Result result =
        new ScenarioJvm().agent("level=full").mainClass(PlantedSites.class.getName()).run();
    assertEquals(0, result.exitCode(), result.toString());
    int rounds = PlantedSites.ROUNDS;
    int secondRounds = (rounds + 2) / 3;
    assertEquals("" + (rounds + secondRounds), result.value("held"), result.toString());
    String plantedAt = "PlantedSites.plant(PlantedSites.java:" + result.value("plant_line") + ")";
    String first = "PlantedSites.viaFirst(PlantedSites.java:";
    String second = "PlantedSites.viaSecond(PlantedSites.java:";
    String mainFirst = "PlantedSites.main(PlantedSites.java:" + result.value("first_caller_line");
    String mainSecond = "PlantedSites.main(PlantedSites.java:" + result.value("second_caller_line");
    List<String> sites = new ArrayList<>();
    for (String line : result.stdout().split("\n")) {
      if (line.startsWith("site ") && line.contains("PlantedSites")) {
        sites.add(line);
      }
    }
    assertEquals(2, sites.size(), result.toString());
    for (String site : sites) {
      String[] parts = site.split(" ", 3);
      String createdAt = parts[2].substring(0, parts[2].indexOf(" | "));
      assertTrue(createdAt.endsWith("." + plantedAt), site);
      long open = Long.parseLong(parts[1]);
      if (site.contains(first)) {
        assertTrue(site.contains(mainFirst + ")") && !site.contains(second), site);
        assertEquals(rounds, open, site);
      } else {
        assertTrue(site.contains(second) && site.contains(mainSecond + ")"), site);
        assertEquals(secondRounds, open, site);
      }
    }
  }
}
