package dev.nativemem.apps.flink.forst;

import static org.junit.jupiter.api.Assertions.assertAll;
import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.nativemem.apps.harness.AgentReport;
import dev.nativemem.apps.harness.AppJvm;
import dev.nativemem.apps.harness.AppRun;
import dev.nativemem.apps.harness.JobClassPath;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * A ForSt cache closed while options that share it are dropped unclosed: the agent reports the
 * options leaked and the cache as a zombie of exactly the capacity the program gave it.
 */
class RetainedCacheTest {
  @Test
  void leakedForstOptionsKeepTheirClosedCacheAliveAsAZombie() throws Exception {
    AppRun run =
        new AppJvm("forst-retained-cache")
            .main(JobClassPath.withClasses(), RetainedCache.class.getName());
    assertEquals(0, run.exitCode(), run.toString());
    AgentReport report = run.report();
    assertAll(
        () ->
            assertEquals(
                RetainedCache.OPTIONS,
                report.count("forst.ColumnFamilyOptions", "leaked"),
                report.summary()),
        () -> assertEquals(1, report.count("forst.LRUCache", "closed"), report.summary()),
        () -> assertEquals(RetainedCache.CAPACITY, report.zombieCapacityBytes(), report.summary()),
        () -> assertEquals(List.of(RetainedCache.CAPACITY), report.zombieCapacities()));
  }
}
