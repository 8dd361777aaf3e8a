package dev.nativemem.tests.handles;

import static dev.nativemem.tests.handles.SourceLine.here;

import dev.nativemem.handles.HandleReport;
import dev.nativemem.handles.NativeHandles;
import java.util.ArrayList;
import java.util.List;
import java.util.zip.Inflater;

/**
 * Inflaters planted on one known line, reached from two callers, many times each, for {@link
 * StackKeysJvmTest}: prints the planted lines, then {@code site <open> <created at> | <frames>} per
 * Inflater site of the report.
 */
public final class PlantedSites {
  /**
   * Rounds of the planting loop: each plants through the first caller, every third also the second.
   */
  static final int ROUNDS = 1200;

  /** Inflaters created and ended before: more walks than it takes the core to switch walkers. */
  static final int CHURN = 2000;

  private static int plantLine;

  private PlantedSites() {}

  public static void main(String[] args) {
    for (int i = 0; i < CHURN; i++) {
      new Inflater().end();
    }
    List<Inflater> held = new ArrayList<>();
    int firstLine = -1;
    int secondLine = -1;
    for (int i = 0; i < ROUNDS; i++) {
      firstLine = here() + 1;
      viaFirst(held);
      if (i % 3 == 0) {
        secondLine = here() + 1;
        viaSecond(held);
      }
    }
    System.out.println("plant_line " + plantLine);
    System.out.println("first_caller_line " + firstLine);
    System.out.println("second_caller_line " + secondLine);
    System.out.println("held " + held.size());
    for (HandleReport.Site site : NativeHandles.report().sites()) {
      if ("Inflater".equals(site.kind()) && site.open() > 0) {
        System.out.println(
            "site "
                + site.open()
                + " "
                + site.createdAt()
                + " | "
                + site.stack().replace("\n", " | "));
      }
    }
    for (Inflater inflater : held) {
      inflater.end();
    }
  }

  private static void viaFirst(List<Inflater> held) {
    plant(held);
  }

  private static void viaSecond(List<Inflater> held) {
    plant(held);
  }

  private static void plant(List<Inflater> held) {
    plantLine = here() + 1;
    held.add(new Inflater());
  }
}
